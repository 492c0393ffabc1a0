// Package configprovider resolves Kafka's config provider placeholders
// (KIP-297, KIP-421, KIP-887, KIP-993): a worker config names providers in
// config.providers, each with config.providers.<name>.class and its
// .param.* keys, and any value of the worker's config or of a connector's
// may hold ${provider:path:key} or ${provider:key}, replaced by what the
// provider reads.
//
// The providers are Kafka's FileConfigProvider (a properties file),
// DirectoryConfigProvider (a file per key) and EnvVarConfigProvider (an
// environment variable per key), under their class names and Strimzi's.
// Where Kafka leaves a placeholder it cannot resolve as it is written, so
// that a password becomes the literal text "${file:...}", this package
// fails naming the key, the provider and what is missing.
package configprovider

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/connectd/connectd/internal/javaregex"
	"github.com/connectd/connectd/internal/properties"
)

// Worker config keys.
const (
	ProvidersConfig = "config.providers"
	prefix          = "config.providers."
)

// The provider classes, Kafka's and Strimzi's names for them.
const (
	FileClass      = "org.apache.kafka.common.config.provider.FileConfigProvider"
	DirectoryClass = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
	EnvVarClass    = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
	strimziEnvVar  = "io.strimzi.kafka.EnvVarConfigProvider"
)

// placeholder is Kafka's ConfigTransformer.DEFAULT_PATTERN.
var placeholder = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// HasPlaceholder reports whether v holds a ${provider:[path:]key}.
func HasPlaceholder(v string) bool { return placeholder.MatchString(v) }

// provider reads one key of one path.
type provider interface {
	get(path, key string) (string, error)
}

// Resolver holds a worker's providers. The zero Resolver (and nil) has
// none: every placeholder is an error.
type Resolver struct {
	providers map[string]provider
}

// New reads the providers a worker config declares. A class connectd
// does not have, a parameter its provider does not take, or an allowed
// path that is not absolute or does not exist is an error naming it.
func New(props map[string]string) (*Resolver, error) {
	r := &Resolver{providers: map[string]provider{}}
	var names []string
	for _, n := range strings.Split(props[ProvidersConfig], ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	for _, name := range names {
		class := strings.TrimSpace(props[prefix+name+".class"])
		params := map[string]string{}
		for k, v := range props {
			if p, ok := strings.CutPrefix(k, prefix+name+".param."); ok {
				params[p] = v
			}
		}
		p, err := newProvider(name, class, params)
		if err != nil {
			return nil, err
		}
		r.providers[name] = p
	}
	// A class or parameter of a provider not listed would be ignored.
	for _, k := range slices.Sorted(maps.Keys(props)) {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, ".")
		if _, listed := r.providers[name]; !listed {
			return nil, fmt.Errorf("Invalid value for configuration %s: config provider %s is not in %s (%s)", k, name, ProvidersConfig, props[ProvidersConfig])
		}
	}
	return r, nil
}

func newProvider(name, class string, params map[string]string) (provider, error) {
	key := func(p string) string { return prefix + name + ".param." + p }
	unknown := func(known ...string) error {
		for _, p := range slices.Sorted(maps.Keys(params)) {
			if !slices.Contains(known, p) {
				return fmt.Errorf("Invalid configuration %s: %s takes no parameter %s", key(p), class, p)
			}
		}
		return nil
	}
	switch class {
	case "":
		return nil, fmt.Errorf("Missing required configuration %q: config provider %s is listed in %s without its class", prefix+name+".class", name, ProvidersConfig)
	case FileClass, DirectoryClass:
		if err := unknown("allowed.paths"); err != nil {
			return nil, err
		}
		allowed, err := allowedPaths(params["allowed.paths"], key("allowed.paths"))
		if err != nil {
			return nil, err
		}
		if class == FileClass {
			return &fileProvider{allowed: allowed}, nil
		}
		return &dirProvider{allowed: allowed}, nil
	case EnvVarClass, strimziEnvVar:
		if err := unknown("allowlist.pattern"); err != nil {
			return nil, err
		}
		pattern := ".*"
		if v, ok := params["allowlist.pattern"]; ok {
			pattern = v
		}
		re, err := javaregex.Compile(pattern)
		if err != nil {
			return nil, fmt.Errorf("Invalid value %s for configuration %s: %v", pattern, key("allowlist.pattern"), err)
		}
		return &envProvider{allow: re, lookup: os.LookupEnv}, nil
	case "io.strimzi.kafka.KubernetesSecretConfigProvider", "io.strimzi.kafka.KubernetesConfigMapConfigProvider":
		return nil, fmt.Errorf("Invalid value %s for configuration %s: connectd does not read Kubernetes Secrets or ConfigMaps through the Kubernetes API; mount them as files and use %s", class, prefix+name+".class", DirectoryClass)
	}
	return nil, fmt.Errorf("Invalid value %s for configuration %s: Class %s could not be found (connectd's config providers: %s, %s, %s)", class, prefix+name+".class", class, FileClass, DirectoryClass, EnvVarClass)
}

// allowedPaths reads allowed.paths as Kafka's AllowedPaths does: absolute
// paths that exist, normalized; nil when unset (every path allowed).
func allowedPaths(v, key string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(v, ",") {
		clean := filepath.Clean(p)
		if !filepath.IsAbs(clean) {
			return nil, fmt.Errorf("Invalid value %s for configuration %s: Path %s is not absolute", v, key, clean)
		}
		if _, err := os.Stat(clean); err != nil {
			return nil, fmt.Errorf("Invalid value %s for configuration %s: Path %s does not exist", v, key, clean)
		}
		out = append(out, clean)
	}
	return out, nil
}

// allowedPath is path normalized, or an error when allowed paths are set
// and none holds it.
func allowedPath(allowed []string, path string) (string, error) {
	if allowed == nil {
		return path, nil
	}
	clean := filepath.Clean(path)
	for _, a := range allowed {
		if clean == a || strings.HasPrefix(clean, strings.TrimSuffix(a, string(filepath.Separator))+string(filepath.Separator)) {
			return clean, nil
		}
	}
	return "", fmt.Errorf("path %s is not in allowed.paths (%s)", path, strings.Join(allowed, ","))
}

// fileProvider is FileConfigProvider: path is a properties file, key one
// of its properties.
type fileProvider struct{ allowed []string }

func (f *fileProvider) get(path, key string) (string, error) {
	p, err := allowedPath(f.allowed, path)
	if err != nil {
		return "", err
	}
	if p == "" {
		return "", errors.New("FileConfigProvider needs a path: ${provider:path:key}")
	}
	props, err := properties.ParseFile(p)
	if err != nil {
		return "", err
	}
	v, ok := props[key]
	if !ok {
		return "", fmt.Errorf("%s has no key %s", p, key)
	}
	return v, nil
}

// dirProvider is DirectoryConfigProvider: path is a directory, key the
// name of a regular file in it, the value its content.
type dirProvider struct{ allowed []string }

func (d *dirProvider) get(path, key string) (string, error) {
	p, err := allowedPath(d.allowed, path)
	if err != nil {
		return "", err
	}
	if key == "" || strings.ContainsAny(key, `/\`) || key == "." || key == ".." {
		return "", fmt.Errorf("%q is not a file name in %s", key, p)
	}
	file := filepath.Join(p, key)
	st, err := os.Stat(file)
	if err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s has no file %s", p, key)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// envProvider is EnvVarConfigProvider: no path, key an environment
// variable whose name the allowlist pattern matches.
type envProvider struct {
	allow  *javaregex.Pattern
	lookup func(string) (string, bool)
}

func (e *envProvider) get(path, key string) (string, error) {
	if path != "" {
		return "", fmt.Errorf("Path is not supported for EnvVarConfigProvider, invalid value '%s'", path)
	}
	if !e.allow.Matches(key) {
		return "", fmt.Errorf("environment variable %s is not allowed by allowlist.pattern %s", key, e.allow)
	}
	v, ok := e.lookup(key)
	if !ok {
		return "", fmt.Errorf("environment variable %s is not set", key)
	}
	return v, nil
}

// Resolve replaces the placeholders of one value. A provider that is not
// configured, or one that cannot give the key, is an error.
func (r *Resolver) Resolve(v string) (string, error) {
	var errs []error
	out := placeholder.ReplaceAllStringFunc(v, func(m string) string {
		g := placeholder.FindStringSubmatch(m)
		name, path, key := g[1], g[3], g[4]
		var p provider
		if r != nil {
			p = r.providers[name]
		}
		if p == nil {
			errs = append(errs, fmt.Errorf("%s names config provider %s, which the worker does not configure (%s)", m, name, ProvidersConfig))
			return m
		}
		val, err := p.get(path, key)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m, err))
			return m
		}
		return val
	})
	if len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	return out, nil
}

// ResolveAll resolves every value of config. It returns the resolved
// config, the keys whose values came from providers (secrets: never to be
// shown), and the errors by key.
func (r *Resolver) ResolveAll(config map[string]string) (resolved map[string]string, fromProviders map[string]bool, errs map[string]error) {
	resolved = make(map[string]string, len(config))
	fromProviders = map[string]bool{}
	for k, v := range config {
		resolved[k] = v
		if !HasPlaceholder(v) {
			continue
		}
		fromProviders[k] = true
		rv, err := r.Resolve(v)
		if err != nil {
			if errs == nil {
				errs = map[string]error{}
			}
			errs[k] = err
			continue
		}
		resolved[k] = rv
	}
	return resolved, fromProviders, errs
}

// Error is the first of errs, by key, as one error naming its key.
func Error(errs map[string]error) error {
	if len(errs) == 0 {
		return nil
	}
	k := slices.Sorted(maps.Keys(errs))[0]
	return fmt.Errorf("config %s: %w", k, errs[k])
}

// Hide puts back the placeholders of raw where a derived config (a task
// config the connector made from the resolved one) holds the value they
// resolved to, as Kafka's AbstractHerder.reverseTransform does, so that
// what is stored and shown holds the placeholder, never the secret.
func Hide(derived, raw, resolved map[string]string) map[string]string {
	out := maps.Clone(derived)
	for k, v := range derived {
		if r, ok := raw[k]; ok && HasPlaceholder(r) && resolved[k] == v {
			out[k] = r
		}
	}
	return out
}

// ResolveWorker reads a worker config's providers and resolves the
// placeholders of its other keys (KIP-421): the worker runs with what they
// resolve to. The providers' own keys are taken as written.
func ResolveWorker(props map[string]string) (map[string]string, *Resolver, error) {
	r, err := New(props)
	if err != nil {
		return nil, nil, err
	}
	own := map[string]string{}
	rest := map[string]string{}
	for k, v := range props {
		if k == ProvidersConfig || strings.HasPrefix(k, prefix) {
			own[k] = v
		} else {
			rest[k] = v
		}
	}
	resolved, _, errs := r.ResolveAll(rest)
	if err := Error(errs); err != nil {
		return nil, nil, fmt.Errorf("worker %w", err)
	}
	maps.Copy(resolved, own)
	return resolved, r, nil
}
