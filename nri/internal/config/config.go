// Package config reads topologyd-nri's configuration file (docs/nri.md lists every key).
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// FailurePolicy says what happens to a container that needs no placement (shared pool) while
// topologyd cannot be reached.
type FailurePolicy string

const (
	// Fail fails the container's creation; kubelet retries it.
	Fail FailurePolicy = "Fail"
	// Ignore creates the container unpinned; the plugin adopts it at the next synchronisation.
	Ignore FailurePolicy = "Ignore"
)

// Config is the plugin's configuration, defaults filled in.
type Config struct {
	// NRISocket is containerd's (or CRI-O's) NRI socket.
	NRISocket string `yaml:"nriSocket"`
	// PluginName and PluginIndex register the plugin; the index orders it among plugins.
	PluginName  string `yaml:"pluginName"`
	PluginIndex string `yaml:"pluginIndex"`
	// TopologydSocket is topologyd's gRPC socket.
	TopologydSocket string `yaml:"topologydSocket"`
	// TopologydTimeout bounds each call to topologyd.
	TopologydTimeout Duration      `yaml:"topologydTimeout"`
	FailurePolicy    FailurePolicy `yaml:"failurePolicy"`
	Cgroup           Cgroup        `yaml:"cgroup"`
	PodSpec          PodSpec       `yaml:"podSpec"`
	Resync           Resync        `yaml:"resync"`
	Log              Log           `yaml:"log"`
}

// Cgroup says where the plugin lifts the CFS quota of the pod cgroup of a pod with exclusive
// CPUs, which no NRI adjustment reaches; it writes nothing else.
type Cgroup struct {
	// Root is the cgroup filesystem; the cpu controller's hierarchy is found under it.
	Root string `yaml:"root"`
	// Version is "auto", "v1" or "v2".
	Version string `yaml:"version"`
	// Driver is kubelet's --cgroup-driver, "cgroupfs" or "systemd": how pod cgroups are named.
	Driver string `yaml:"driver"`
}

// PodSpec says where topologyd takes a pod's spec from.
type PodSpec struct {
	// Sources, in order: "annotation" (topologyd.io/resources) and "estimate" (from the
	// container's Linux resources).
	Sources []string `yaml:"sources"`
}

// Resync says what the plugin does when it (re)connects to the runtime.
type Resync struct {
	// ReleaseOrphans releases pods topologyd holds that the runtime has no sandbox for.
	ReleaseOrphans bool `yaml:"releaseOrphans"`
}

// Log is as topologyd's.
type Log struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// Duration is a time.Duration written as Go writes it ("5s", "250ms").
type Duration struct{ time.Duration }

// UnmarshalYAML reads "5s"-style durations.
func (d *Duration) UnmarshalYAML(node *yaml.Node) error {
	parsed, err := time.ParseDuration(node.Value)
	if err != nil || parsed <= 0 {
		return fmt.Errorf("line %d: %q is not a positive duration (e.g. 5s, 500ms)", node.Line, node.Value)
	}
	d.Duration = parsed
	return nil
}

// Default is the configuration without a file.
func Default() Config {
	return Config{
		NRISocket:        "/var/run/nri/nri.sock",
		PluginName:       "topologyd",
		PluginIndex:      "10",
		TopologydSocket:  "/run/topologyd/topologyd.sock",
		TopologydTimeout: Duration{5 * time.Second},
		FailurePolicy:    Fail,
		Cgroup:           Cgroup{Root: "/sys/fs/cgroup", Version: "auto", Driver: "cgroupfs"},
		PodSpec:          PodSpec{Sources: []string{"annotation", "estimate"}},
		Resync:           Resync{ReleaseOrphans: true},
		Log:              Log{Level: "info", Format: "text"},
	}
}

// Parse reads YAML text over the defaults; unknown keys and bad values are errors naming the
// file, line and key, all of them at once.
func Parse(text []byte, file string) (Config, error) {
	c := Default()
	decoder := yaml.NewDecoder(bytes.NewReader(text))
	decoder.KnownFields(true)
	if err := decoder.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, fmt.Errorf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if err := Validate(c, file); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate checks a configuration, naming `source` (a file, or the command line) in errors.
func Validate(c Config, source string) error {
	if problems := c.check(); len(problems) > 0 {
		return fmt.Errorf("%s: %s", source, strings.Join(problems, "\n"+source+": "))
	}
	return nil
}

// Load reads and parses a file.
func Load(path string) (Config, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("cannot read the configuration: %w", err)
	}
	return Parse(text, path)
}

func (c *Config) check() []string {
	var problems []string
	bad := func(key, format string, args ...any) {
		problems = append(problems, key+": "+fmt.Sprintf(format, args...))
	}
	for _, socket := range []struct{ key, path string }{
		{"nriSocket", c.NRISocket}, {"topologydSocket", c.TopologydSocket},
	} {
		if !filepath.IsAbs(socket.path) {
			bad(socket.key, "%q is not an absolute path", socket.path)
		}
	}
	if c.PluginName == "" || strings.ContainsAny(c.PluginName, "/ \t") {
		bad("pluginName", "%q is not a plugin name (non-empty, no '/' or spaces)", c.PluginName)
	}
	// NRI orders plugins by a two-digit index.
	if n, err := strconv.Atoi(c.PluginIndex); err != nil || len(c.PluginIndex) != 2 || n < 0 {
		bad("pluginIndex", "%q is not a two-digit index (00-99)", c.PluginIndex)
	}
	if !filepath.IsAbs(c.Cgroup.Root) {
		bad("cgroup.root", "%q is not an absolute path", c.Cgroup.Root)
	}
	if c.Cgroup.Version != "auto" && c.Cgroup.Version != "v1" && c.Cgroup.Version != "v2" {
		bad("cgroup.version", "%q is not auto, v1 or v2", c.Cgroup.Version)
	}
	if c.Cgroup.Driver != "cgroupfs" && c.Cgroup.Driver != "systemd" {
		bad("cgroup.driver", "%q is not cgroupfs or systemd", c.Cgroup.Driver)
	}
	if c.FailurePolicy != Fail && c.FailurePolicy != Ignore {
		bad("failurePolicy", "%q is not Fail or Ignore", c.FailurePolicy)
	}
	if len(c.PodSpec.Sources) == 0 {
		bad("podSpec.sources", "expected a non-empty list of annotation, estimate")
	}
	seen := map[string]bool{}
	for _, s := range c.PodSpec.Sources {
		if s != "annotation" && s != "estimate" {
			bad("podSpec.sources", "%q is not annotation or estimate (the apiServer source is the kubelet shim's only)", s)
		}
		if seen[s] {
			bad("podSpec.sources", "%q is listed twice", s)
		}
		seen[s] = true
	}
	switch c.Log.Level {
	case "trace", "debug", "info", "warn", "error", "critical", "off":
	default:
		bad("log.level", "%q is not trace, debug, info, warn, error, critical or off", c.Log.Level)
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		bad("log.format", "%q is not text or json", c.Log.Format)
	}
	return problems
}
