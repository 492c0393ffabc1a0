package configprovider

import (
	"github.com/connectd/connectd/internal/javaregex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func providers(t *testing.T, dir string) *Resolver {
	t.Helper()
	r, err := New(map[string]string{
		"config.providers":                             "file, dir,env",
		"config.providers.file.class":                  FileClass,
		"config.providers.file.param.allowed.paths":    dir,
		"config.providers.dir.class":                   DirectoryClass,
		"config.providers.env.class":                   EnvVarClass,
		"config.providers.env.param.allowlist.pattern": "APP_.*",
	})
	if err != nil {
		t.Fatal(err)
	}
	r.providers["env"].(*envProvider).lookup = func(k string) (string, bool) {
		v, ok := map[string]string{"APP_USER": "ann", "OTHER": "x"}[k]
		return v, ok
	}
	return r
}

// The three providers as Kafka's behave, several placeholders in a value,
// and every way a placeholder can fail to resolve named.
func TestResolve(t *testing.T) {
	dir := t.TempDir()
	props := filepath.Join(dir, "db.properties")
	if err := os.WriteFile(props, []byte("password=s3cret\nurl = jdbc:postgresql://h/d\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := filepath.Join(dir, "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secrets, "token"), []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := providers(t, dir)
	for in, want := range map[string]string{
		"${file:" + props + ":password}":                         "s3cret",
		"user=${env:APP_USER};pw=${file:" + props + ":password}": "user=ann;pw=s3cret",
		"${dir:" + secrets + ":token}":                           "tok\n",
		"${env::APP_USER}":                                       "ann",
		"no placeholder, ${not one}, $x":                         "no placeholder, ${not one}, $x",
	} {
		got, err := r.Resolve(in)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"${vault:x:y}":                            "names config provider vault, which the worker does not configure",
		"${file:" + props + ":nope}":              props + " has no key nope",
		"${file:/etc/hostname:x}":                 "path /etc/hostname is not in allowed.paths",
		"${file:" + dir + "/../x.properties:y}":   "is not in allowed.paths",
		"${dir:" + secrets + ":nope}":             secrets + " has no file nope",
		"${dir:" + secrets + ":../db.properties}": `"../db.properties" is not a file name`,
		"${env:OTHER}":                            "environment variable OTHER is not allowed by allowlist.pattern APP_.*",
		"${env:APP_NONE}":                         "environment variable APP_NONE is not set",
		"${env:/p:APP_USER}":                      "Path is not supported for EnvVarConfigProvider",
	} {
		if got, err := r.Resolve(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(%q) = %q, %v; want an error with %q", in, got, err, want)
		}
	}
	// Without providers every placeholder is an error; text without one
	// passes.
	var none *Resolver
	if _, err := none.Resolve("${env:APP_USER}"); err == nil {
		t.Error("a nil Resolver resolved a placeholder")
	}
	if got, err := none.Resolve("plain"); err != nil || got != "plain" {
		t.Errorf("a nil Resolver and plain text: %q, %v", got, err)
	}
}

// Worker configs: what is refused names its key; the worker's own values
// are resolved, the providers' keys taken as written.
func TestNewAndResolveWorker(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		props map[string]string
		want  string
	}{
		"no class":       {map[string]string{"config.providers": "a"}, `Missing required configuration "config.providers.a.class"`},
		"unknown class":  {map[string]string{"config.providers": "a", "config.providers.a.class": "com.example.Vault"}, "Class com.example.Vault could not be found"},
		"strimzi k8s":    {map[string]string{"config.providers": "s", "config.providers.s.class": "io.strimzi.kafka.KubernetesSecretConfigProvider"}, "mount them as files"},
		"unknown param":  {map[string]string{"config.providers": "f", "config.providers.f.class": FileClass, "config.providers.f.param.allowed.path": "/"}, "config.providers.f.param.allowed.path"},
		"relative path":  {map[string]string{"config.providers": "f", "config.providers.f.class": FileClass, "config.providers.f.param.allowed.paths": "rel"}, "Path rel is not absolute"},
		"missing path":   {map[string]string{"config.providers": "f", "config.providers.f.class": FileClass, "config.providers.f.param.allowed.paths": dir + "/nope"}, "does not exist"},
		"bad pattern":    {map[string]string{"config.providers": "e", "config.providers.e.class": EnvVarClass, "config.providers.e.param.allowlist.pattern": "("}, "config.providers.e.param.allowlist.pattern"},
		"not listed":     {map[string]string{"config.providers": "e", "config.providers.e.class": EnvVarClass, "config.providers.f.class": FileClass}, "config provider f is not in config.providers"},
		"worker unknown": {map[string]string{"group.id": "${env:X}"}, "worker config group.id: ${env:X} names config provider env"},
	} {
		_, _, err := ResolveWorker(c.props)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
	t.Setenv("CONNECTD_PROVIDER_TEST", "from-env")
	props, r, err := ResolveWorker(map[string]string{
		"config.providers": "strimzienv", "config.providers.strimzienv.class": "io.strimzi.kafka.EnvVarConfigProvider",
		"config.providers.strimzienv.param.allowlist.pattern": ".*", "rest.advertised.host.name": "${strimzienv:CONNECTD_PROVIDER_TEST}",
	})
	if err != nil || props["rest.advertised.host.name"] != "from-env" || props["config.providers.strimzienv.param.allowlist.pattern"] != ".*" || r == nil {
		t.Errorf("ResolveWorker: %v %v", props, err)
	}
}

// Hide puts a placeholder back where a task config holds its value.
func TestHide(t *testing.T) {
	raw := map[string]string{"password": "${env:PW}", "url": "jdbc:x", "user": "${env:U}"}
	resolved := map[string]string{"password": "s3cret", "url": "jdbc:x", "user": "ann"}
	task := map[string]string{"password": "s3cret", "url": "jdbc:x", "user": "bob", "task.class": "T"}
	got := Hide(task, raw, resolved)
	if got["password"] != "${env:PW}" || got["user"] != "bob" || got["url"] != "jdbc:x" || got["task.class"] != "T" {
		t.Errorf("Hide: %v", got)
	}
}

// FuzzResolve: whatever a value holds, resolving it does not panic, text
// with no placeholder comes back as it is, and a value resolves or fails
// the same way twice.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"${env:APP_USER}", "${a:b:c}${", "$${env:APP_USER}}", "${:}", "${env::APP_USER}x${env:OTHER}", "plain"} {
		f.Add(s)
	}
	r := &Resolver{providers: map[string]provider{"env": &envProvider{allow: mustPattern(".*"), lookup: func(k string) (string, bool) { return "v", k == "APP_USER" }}}}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := r.Resolve(s)
		if !HasPlaceholder(s) && (err != nil || got != s) {
			t.Fatalf("%q without a placeholder: %q, %v", s, got, err)
		}
		again, err2 := r.Resolve(s)
		if again != got || (err == nil) != (err2 == nil) {
			t.Fatalf("%q: %q, %v then %q, %v", s, got, err, again, err2)
		}
	})
}

func mustPattern(p string) *javaregex.Pattern {
	re, err := javaregex.Compile(p)
	if err != nil {
		panic(err)
	}
	return re
}
