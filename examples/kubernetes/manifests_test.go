// Package kubernetes holds the Kubernetes example of deploying connectd;
// its test checks the manifests and the image's Dockerfile.
package kubernetes

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/internal/configprovider"
	"github.com/connectd/connectd/internal/properties"
	"github.com/connectd/connectd/internal/worker"
)

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

// manifest is what the test reads of the objects.
type manifest struct {
	Kind       string                `yaml:"kind"`
	Metadata   struct{ Name string } `yaml:"metadata"`
	Data       map[string]string     `yaml:"data"`
	StringData map[string]string     `yaml:"stringData"`
	Spec       struct {
		Replicas int `yaml:"replicas"`
		Template struct {
			Metadata struct {
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"metadata"`
			Spec struct {
				SecurityContext struct {
					RunAsNonRoot bool `yaml:"runAsNonRoot"`
					RunAsUser    int  `yaml:"runAsUser"`
				} `yaml:"securityContext"`
				Containers []struct {
					Args  []string `yaml:"args"`
					Ports []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
					ReadinessProbe probe `yaml:"readinessProbe"`
					LivenessProbe  probe `yaml:"livenessProbe"`
					VolumeMounts   []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name      string                 `yaml:"name"`
					ConfigMap *struct{ Name string } `yaml:"configMap"`
					Secret    *struct {
						SecretName string `yaml:"secretName"`
					} `yaml:"secret"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// The example deploys three workers whose probes ask /health on the REST
// port, scraped at /metrics, running as non-root, their worker config from
// the ConfigMap a real worker parses, and the Secret mounted where the
// config provider reads it: a connector's password resolves to it.
func TestManifests(t *testing.T) {
	data, err := os.ReadFile("connectd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]manifest{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var m manifest
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("connectd.yaml: %v", err)
		}
		byKind[m.Kind] = m
	}
	for _, k := range []string{"Secret", "ConfigMap", "Deployment", "Service"} {
		if _, ok := byKind[k]; !ok {
			t.Fatalf("no %s in connectd.yaml", k)
		}
	}
	d := byKind["Deployment"].Spec
	pod := d.Template.Spec
	if d.Replicas != 3 || len(pod.Containers) != 1 {
		t.Fatalf("want 3 replicas of one container: %+v", d)
	}
	c := pod.Containers[0]
	if !slices.Equal(c.Args, []string{"distributed", "/etc/connectd/worker.properties"}) {
		t.Errorf("args %v", c.Args)
	}
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	for _, probe := range []string{c.ReadinessProbe.HTTPGet.Path + " " + c.ReadinessProbe.HTTPGet.Port, c.LivenessProbe.HTTPGet.Path + " " + c.LivenessProbe.HTTPGet.Port} {
		if probe != "/health rest" || ports["rest"] != 8083 {
			t.Errorf("probe %q, rest port %d", probe, ports["rest"])
		}
	}
	ann := d.Template.Metadata.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/path"] != "/metrics" || ann["prometheus.io/port"] != "8083" {
		t.Errorf("scrape annotations %v", ann)
	}
	if !pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.RunAsUser == 0 {
		t.Errorf("security context %+v", pod.SecurityContext)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	var secretMount string
	for _, v := range pod.Volumes {
		switch {
		case v.ConfigMap != nil && v.ConfigMap.Name == byKind["ConfigMap"].Metadata.Name && mounts[v.Name] != "/etc/connectd":
			t.Errorf("the worker config is mounted at %q", mounts[v.Name])
		case v.Secret != nil && v.Secret.SecretName == byKind["Secret"].Metadata.Name:
			secretMount = mounts[v.Name]
		}
	}

	// The worker config, as a worker reads it, with the pod's address
	// and the Secret where the pod has them.
	props, err := properties.Parse(strings.NewReader(byKind["ConfigMap"].Data["worker.properties"]))
	if err != nil {
		t.Fatal(err)
	}
	allowed := props["config.providers.dir.param.allowed.paths"]
	if !strings.HasPrefix(secretMount, allowed+"/") {
		t.Fatalf("the Secret is mounted at %q, outside allowed.paths %q", secretMount, allowed)
	}
	root := t.TempDir()
	local := filepath.Join(root, strings.TrimPrefix(secretMount, allowed))
	if err := os.MkdirAll(local, 0o700); err != nil {
		t.Fatal(err)
	}
	for k, v := range byKind["Secret"].StringData {
		if err := os.WriteFile(filepath.Join(local, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	props["config.providers.dir.param.allowed.paths"] = root
	t.Setenv("POD_IP", "10.1.2.3")
	resolved, providers, err := configprovider.ResolveWorker(props)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := worker.ParseConfig(resolved)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := worker.ParseDistributedConfig(resolved); err != nil {
		t.Fatal(err)
	}
	if cfg.AdvertisedHost != "10.1.2.3" || len(cfg.BootstrapServers) == 0 {
		t.Errorf("advertised host %q, bootstrap %v", cfg.AdvertisedHost, cfg.BootstrapServers)
	}
	if pw, err := providers.Resolve("${dir:" + local + ":password}"); err != nil || pw != byKind["Secret"].StringData["password"] {
		t.Errorf("the connector's password from the Secret: %q, %v", pw, err)
	}
}

// The image is an empty base with the binaries, run as a non-root user.
func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var from, user []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "FROM":
			from = append(from, f[1])
		case "USER":
			user = append(user, f[1])
		}
	}
	if !slices.Equal(from, []string{"scratch"}) || len(user) != 1 || strings.HasPrefix(user[0], "0") || strings.HasPrefix(user[0], "root") {
		t.Errorf("FROM %v, USER %v: want scratch and a non-root user", from, user)
	}
}
