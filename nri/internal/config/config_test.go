package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTheShippedFileIsTheDefaults(t *testing.T) {
	shipped, err := Load(filepath.Join("..", "..", "..", "config", "topologyd-nri.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	if shipped.NRISocket != want.NRISocket || shipped.PluginName != want.PluginName ||
		shipped.PluginIndex != want.PluginIndex || shipped.TopologydSocket != want.TopologydSocket ||
		shipped.TopologydTimeout != want.TopologydTimeout || shipped.FailurePolicy != want.FailurePolicy ||
		shipped.Cgroup != want.Cgroup ||
		strings.Join(shipped.PodSpec.Sources, ",") != strings.Join(want.PodSpec.Sources, ",") ||
		shipped.Resync != want.Resync || shipped.Log != want.Log {
		t.Errorf("config/topologyd-nri.yaml = %+v, defaults = %+v", shipped, want)
	}
}

func TestAFileOverridesTheDefaults(t *testing.T) {
	c, err := Parse([]byte("topologydTimeout: 250ms\nfailurePolicy: Ignore\npodSpec: {sources: [estimate]}\n"+
		"log: {level: debug, format: json}\n"), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.TopologydTimeout.Duration != 250*time.Millisecond || c.FailurePolicy != Ignore ||
		len(c.PodSpec.Sources) != 1 || c.Log.Format != "json" || c.PluginName != "topologyd" {
		t.Errorf("got %+v", c)
	}
}

func TestEveryProblemIsNamedWithItsKey(t *testing.T) {
	_, err := Parse([]byte("nriSocket: relative.sock\npluginIndex: '7'\nfailurePolicy: Maybe\n"+
		"cgroup: {root: sys, version: v3, driver: openrc}\n"+
		"podSpec: {sources: [apiServer, estimate, estimate]}\nlog: {level: loud, format: xml}\n"), "f.yaml")
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		"f.yaml: nriSocket: \"relative.sock\"", "pluginIndex: \"7\"", "failurePolicy: \"Maybe\"",
		"podSpec.sources: \"apiServer\"", "podSpec.sources: \"estimate\" is listed twice",
		"log.level: \"loud\"", "log.format: \"xml\"", "cgroup.root: \"sys\"", "cgroup.version: \"v3\"",
		"cgroup.driver: \"openrc\"",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in:\n%v", want, err)
		}
	}
}

func TestUnknownKeysAndBadDurationsNameTheLine(t *testing.T) {
	for text, want := range map[string]string{
		"nriSocket: /a\nlisten: /b\n":    "line 2: field listen not found",
		"topologydTimeout: soon\n":       "line 1: \"soon\" is not a positive duration",
		"topologydTimeout: -1s\n":        "is not a positive duration",
		"failurePolicy: [Fail]\n":        "line 1",
		"podSpec: {sources: estimate}\n": "line 1",
	} {
		if _, err := Parse([]byte(text), "f.yaml"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", text, err, want)
		}
	}
}

func TestAnEmptyFileIsTheDefaultsAndAMissingOneAnError(t *testing.T) {
	if _, err := Parse(nil, "empty.yaml"); err != nil {
		t.Error(err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("got %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		next, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = next.Unwrap()
	}
}
