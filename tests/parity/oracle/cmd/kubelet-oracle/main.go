// Command kubelet-oracle runs one parity case (tests/parity/oracle/caseformat) through
// kubelet's own CPU, Memory, Device and Topology managers and prints every decision as JSON.
// A case with devices runs in a private mount namespace (namespace.go).
//
//	kubelet-oracle < case.json > decisions.json
//
// Exit 0 with the decisions (or a setup_error when the managers refuse the configuration on
// the machine), 1 when the case cannot be read or an operation is impossible.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/klog/v2"

	"topologyd.test/parity/oracle/caseformat"
)

func main() {
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	_ = klogFlags.Set("logtostderr", "false")
	_ = klogFlags.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kubelet-oracle:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	input, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("case: %w", err)
	}
	var c caseformat.Case
	if err := json.Unmarshal(input, &c); err != nil {
		return fmt.Errorf("case: %w", err)
	}
	if len(c.Kubelet.Devices) > 0 {
		if os.Getenv(privateMountsEnv) == "" {
			runPrivately(input) // does not return
		}
		if err := privateMounts(); err != nil {
			return err
		}
	}
	result, err := decide(c)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", " ")
	return enc.Encode(result)
}

func decide(c caseformat.Case) (caseformat.Result, error) {
	result := caseformat.Result{Decisions: []caseformat.Decision{}}
	info, err := machineInfo(c.Machine)
	if err != nil {
		return result, err
	}
	stateDir, err := os.MkdirTemp("", "kubelet-oracle-")
	if err != nil {
		return result, err
	}
	defer os.RemoveAll(stateDir)
	ctx := context.Background()
	pods := &activePods{}
	m, err := newManagers(ctx, c.Kubelet, info, stateDir, pods)
	if err != nil {
		result.SetupError = err.Error()
		return result, nil
	}
	o := &oracle{ctx: ctx, m: m, pods: pods, static: withDefaults(c.Kubelet).CPUManagerPolicy == "static"}
	for i, op := range c.Operations {
		var d caseformat.Decision
		switch {
		case op.Admit != nil:
			d, err = o.admit(op.Admit)
		case op.Remove != "":
			d, err = o.remove(op.Remove)
		default:
			err = fmt.Errorf("operation %d: neither admit nor remove", i)
		}
		if err != nil {
			return result, err
		}
		result.Decisions = append(result.Decisions, d)
	}
	return result, nil
}
