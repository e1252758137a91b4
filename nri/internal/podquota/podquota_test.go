package podquota

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

func TestV1WritesMinusOneIntoThePodsCfsQuota(t *testing.T) {
	root := t.TempDir()
	write(t, root+"/cpu,cpuacct/cpu.cfs_quota_us", "-1")
	write(t, root+"/cpu,cpuacct/kubepods/podu1/cpu.cfs_quota_us", "100000")
	l, err := Open(root, "auto", "cgroupfs")
	if err != nil {
		t.Fatal(err)
	}
	pod, err := l.PodCgroup("/kubepods/podu1")
	if err != nil || pod != "kubepods/podu1" {
		t.Fatalf("PodCgroup = %q, %v", pod, err)
	}
	if err := l.Lift(pod); err != nil {
		t.Fatal(err)
	}
	if got := read(t, root+"/cpu,cpuacct/kubepods/podu1/cpu.cfs_quota_us"); got != "-1" {
		t.Errorf("cpu.cfs_quota_us = %q", got)
	}
}

func TestV2WritesMaxAndKeepsThePeriodUnderASystemdSlice(t *testing.T) {
	root := t.TempDir()
	write(t, root+"/cgroup.controllers", "cpuset cpu io memory")
	dir := root + "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1_2.slice"
	write(t, dir+"/cpu.max", "150000 100000\n")
	l, err := Open(root, "auto", "systemd")
	if err != nil {
		t.Fatal(err)
	}
	pod, err := l.PodCgroup("kubepods-burstable-pod1_2.slice")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Lift(pod); err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir+"/cpu.max"); got != "max 100000" {
		t.Errorf("cpu.max = %q", got)
	}
}

func TestNothingIsCreatedOrWrittenOutsideTheHierarchy(t *testing.T) {
	root := t.TempDir()
	write(t, root+"/cpu/cpu.cfs_quota_us", "-1")
	outside := t.TempDir()
	write(t, outside+"/pod/cpu.cfs_quota_us", "100000")
	if err := os.Symlink(outside+"/pod", root+"/cpu/linked"); err != nil {
		t.Fatal(err)
	}
	l, err := Open(root, "v1", "cgroupfs")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Lift("missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing pod cgroup: %v", err)
	}
	if _, err := os.Stat(root + "/cpu/missing"); !errors.Is(err, os.ErrNotExist) {
		t.Error("a missing pod cgroup was created")
	}
	if err := l.Lift("linked"); err == nil {
		t.Error("a symlink was followed")
	}
	if got := read(t, outside+"/pod/cpu.cfs_quota_us"); got != "100000" {
		t.Errorf("written through a symlink: %q", got)
	}
	for _, parent := range []string{"", "/kubepods/../../etc", "/kubepods//pod"} {
		if _, err := l.PodCgroup(parent); err == nil {
			t.Errorf("PodCgroup(%q) accepted", parent)
		}
	}
	systemd := &Lifter{hierarchy: root, systemd: true}
	for _, parent := range []string{"-.slice", "kubepods/podu1", "a--b.slice"} {
		if _, err := systemd.PodCgroup(parent); err == nil {
			t.Errorf("systemd PodCgroup(%q) accepted", parent)
		}
	}
}

func TestARootWithoutACpuHierarchyDoesNotOpen(t *testing.T) {
	root := t.TempDir()
	if _, err := Open(root, "auto", "cgroupfs"); err == nil || !strings.Contains(err.Error(), "cgroup.root") {
		t.Errorf("got %v", err)
	}
	write(t, root+"/cgroup.controllers", "memory")
	if _, err := Open(root, "v2", "cgroupfs"); err == nil {
		t.Error("a v2 root without the cpu controller opened")
	}
}
