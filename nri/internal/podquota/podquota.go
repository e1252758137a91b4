// Package podquota lifts the CFS quota of a pod cgroup, as kubelet's static CPU policy creates
// the pod cgroup of a pod with exclusive CPUs (DisableCPUQuotaWithExclusiveCPUs). kubelet, its
// managers off, gives the pod cgroup the quota of the pod's CPU limits; topologyd says which
// pods have exclusive CPUs, and an NRI adjustment cannot reach a pod cgroup, so the plugin
// writes it as the kubelet shim does.
//
// The cpu controller's hierarchy is found once under the configured root; every access stays
// beneath it (openat2 with RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS), and nothing is created.
package podquota

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Lifter writes pod cgroups' CFS quotas. Safe for concurrent use.
type Lifter struct {
	hierarchy string // the cpu controller's hierarchy
	v2        bool
	systemd   bool // the cgroup driver names pod cgroups as systemd slices
}

// Open finds the cpu controller's hierarchy under root: the unified hierarchy (version "v2",
// or "auto" when root/cgroup.controllers names cpu), or root/cpu,cpuacct or root/cpu (v1).
// driver is kubelet's cgroup driver, "cgroupfs" or "systemd".
func Open(root, version, driver string) (*Lifter, error) {
	l := &Lifter{systemd: driver == "systemd"}
	if version == "v2" || version == "auto" {
		controllers, err := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
		if err == nil && containsWord(string(controllers), "cpu") {
			l.hierarchy, l.v2 = root, true
			return l, nil
		}
		if version == "v2" {
			return nil, fmt.Errorf("cgroup.root %s has no cgroup v2 cpu controller", root)
		}
	}
	for _, dir := range []string{"cpu,cpuacct", "cpu"} {
		path := filepath.Join(root, dir)
		if _, err := os.Stat(filepath.Join(path, "cpu.cfs_quota_us")); err == nil {
			l.hierarchy = path
			return l, nil
		}
	}
	return nil, fmt.Errorf("cgroup.root %s has no cpu controller hierarchy (v2: cpu in cgroup.controllers; v1: cpu,cpuacct or cpu)", root)
}

// Hierarchy is the cpu controller's directory, for messages.
func (l *Lifter) Hierarchy() string { return l.hierarchy }

// PodCgroup is the pod cgroup that kubelet named in a sandbox's cgroup parent, relative to the
// hierarchy: cgroupfs "/kubepods/burstable/pod<uid>" as it is; systemd
// "kubepods-burstable-pod<uid_>.slice" (or a path ending in one) expanded to its place in the
// tree, "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice".
func (l *Lifter) PodCgroup(parent string) (string, error) {
	if parent == "" {
		return "", errors.New("the sandbox has no cgroup parent")
	}
	rel := strings.Trim(parent, "/")
	if l.systemd {
		slice := rel[strings.LastIndex(rel, "/")+1:]
		if !strings.HasSuffix(slice, ".slice") || slice == "-.slice" {
			return "", fmt.Errorf("cgroup parent %q is not a systemd slice below the root", parent)
		}
		name := strings.TrimSuffix(slice, ".slice")
		var parts []string
		for i, c := range name {
			if c == '-' {
				if i == 0 || name[i-1] == '-' || i == len(name)-1 {
					return "", fmt.Errorf("cgroup parent %q is not a valid slice name", parent)
				}
				parts = append(parts, name[:i]+".slice")
			}
		}
		rel = filepath.Join(append(parts, slice)...)
	}
	for _, part := range strings.Split(rel, "/") {
		if part == "" || part == "." || part == ".." {
			return "", fmt.Errorf("cgroup parent %q is not a path below the hierarchy", parent)
		}
	}
	return rel, nil
}

// Lift makes the pod cgroup's CFS quota unlimited: v1 cpu.cfs_quota_us -1, v2 cpu.max
// "max <its period>". An error wrapping os.ErrNotExist when the pod cgroup does not exist.
func (l *Lifter) Lift(podCgroup string) error {
	if !l.v2 {
		return l.write(filepath.Join(podCgroup, "cpu.cfs_quota_us"), "-1")
	}
	file := filepath.Join(podCgroup, "cpu.max")
	current, err := l.read(file)
	if err != nil {
		return err
	}
	fields := strings.Fields(current)
	if len(fields) != 2 {
		return fmt.Errorf("%s/%s: %q is not \"<quota> <period>\"", l.hierarchy, file, current)
	}
	return l.write(file, "max "+fields[1])
}

func (l *Lifter) open(file string, flags int) (*os.File, error) {
	dir, err := unix.Open(l.hierarchy, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: l.hierarchy, Err: err}
	}
	defer unix.Close(dir)
	fd, err := unix.Openat2(dir, file, &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(l.hierarchy, file), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(l.hierarchy, file)), nil
}

func (l *Lifter) read(file string) (string, error) {
	f, err := l.open(file, unix.O_RDONLY)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var text bytes.Buffer
	if _, err := text.ReadFrom(f); err != nil {
		return "", err
	}
	return strings.TrimSpace(text.String()), nil
}

func (l *Lifter) write(file, value string) error {
	f, err := l.open(file, unix.O_WRONLY|unix.O_TRUNC)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(value); err != nil {
		f.Close()
		return fmt.Errorf("%s: writing %q: %w", f.Name(), value, err)
	}
	return f.Close()
}

func containsWord(text, word string) bool {
	for _, w := range strings.Fields(text) {
		if w == word {
			return true
		}
	}
	return false
}
