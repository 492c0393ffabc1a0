// Drives connectd's web console in Debian's Chromium, as a user would:
// the connectors list, a connector, a change of its offsets through the
// safe flow and its undo, a consumer group reset, and a connector created
// from its plugin's config with validation as it is typed. A screenshot of
// each page goes to the artifacts directory; any console error fails.
//
//   node console.mjs BASE_URL ARTIFACTS_DIR PARAMS_JSON
//
// PARAMS_JSON: {"connector": "src", "from": 90, "to": 30, "group": "billing",
// "file": "/path/of/a/new/source's/file"}
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const [base, artifacts, paramsJSON] = process.argv.slice(2);
const params = JSON.parse(paramsJSON);
mkdirSync(artifacts, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const errors = [];
let step = 0;
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
try {
  page.setDefaultTimeout(20000);
  page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
  page.on("pageerror", (e) => errors.push("page: " + e.message));
  const shot = async (name) => {
    step++;
    await page.screenshot({ path: join(artifacts, `${String(step).padStart(2, "0")}-${name}.png`), fullPage: true });
  };
  const offsets = async () => (await (await fetch(`${base}/connectors/${params.connector}/offsets`)).json()).offsets;
  const expectPosition = async (want, what) => {
    const deadline = Date.now() + 15000;
    for (;;) {
      const got = await offsets();
      if (got.length === 1 && got[0].offset.position === want) return;
      if (Date.now() > deadline) throw new Error(`${what}: offsets ${JSON.stringify(got)}, want position ${want}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  // The list, and one connector.
  await page.goto(`${base}/ui/`);
  await page.getByTestId("connectors").getByRole("link", { name: params.connector }).waitFor();
  await shot("connectors");
  await page.getByRole("link", { name: params.connector }).click();
  await page.getByTestId("offsets").getByText(`"position":${params.from}`).waitFor();
  await page.getByText("PAUSED").first().waitFor();
  await shot("connector");

  // Change its offsets through the safe flow.
  await page.getByTestId("change-offsets").click();
  const text = page.getByTestId("offsets-json");
  const edited = (await text.inputValue()).replace(`"position": ${params.from}`, `"position": ${params.to}`);
  await text.fill(edited);
  await page.getByTestId("review").click();
  await page.getByTestId("diff").getByText(`"position":${params.to}`).waitFor();
  await shot("offsets-review");
  await page.getByTestId("apply").click();
  await page.getByTestId("change-done").waitFor();
  for (const s of ["stop", "save", "apply", "verify", "restore"]) {
    const cls = await page.locator(`[data-step="${s}"]`).getAttribute("class");
    if (!/done/.test(cls || "")) throw new Error(`step ${s} is not marked done: ${cls}`);
  }
  await shot("offsets-applied");
  await expectPosition(params.to, "after the change");

  // Undo it from the history.
  await page.getByTestId("offsets").getByText(`"position":${params.to}`).waitFor();
  await page.getByTestId("show-history").click();
  await page.getByTestId("undo").click();
  await page.getByTestId("diff").getByText(`"position":${params.from}`).waitFor();
  await shot("undo-review");
  await page.getByTestId("apply").click();
  await page.getByTestId("change-done").waitFor();
  await shot("undone");
  await expectPosition(params.from, "after undo");

  // A consumer group: its partitions, a preview, the reset.
  await page.getByTestId("nav-groups").click();
  await page.getByTestId("groups").getByRole("link", { name: params.group }).click();
  await page.getByTestId("group-partitions").waitFor();
  await shot("group");
  await page.getByTestId("reset-to").selectOption("earliest");
  await page.getByTestId("reset-preview").click();
  await page.getByTestId("reset-diff").waitFor();
  await shot("group-reset-preview");
  await page.getByTestId("reset-apply").click();
  await page.getByTestId("reset-done").waitFor();
  await shot("group-reset");

  // A new connector, validated as it is typed.
  await page.getByTestId("nav-new").click();
  await page.getByTestId("plugin").selectOption("org.apache.kafka.connect.file.FileStreamSourceConnector");
  await page.getByTestId("connector-name-input").fill("made-in-console");
  await page.locator('[data-msg="topic"]').getByText("Missing required configuration").waitFor();
  await shot("new-connector-invalid");
  await page.locator('[data-key="topic"]').fill("console-lines");
  await page.locator('[data-key="file"]').fill(params.file);
  await page.getByText("The config is valid.").waitFor();
  await page.getByTestId("create").click();
  await page.getByTestId("connector-name").getByText("made-in-console").waitFor();
  await shot("new-connector-created");
} catch (err) {
  errors.push("step " + (step + 1) + ": " + (err.stack || err.message));
  await page.screenshot({ path: join(artifacts, "failure.png"), fullPage: true }).catch(() => {});
} finally {
  await browser.close();
}
if (errors.length) {
  console.error(errors.join("\n"));
  process.exit(1);
}
console.log(`ok: ${step} screenshots in ${artifacts}`);
