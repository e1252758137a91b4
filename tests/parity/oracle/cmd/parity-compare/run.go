package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"time"

	"topologyd.test/parity/oracle/caseformat"
)

// How long one program may take on one case. The generator keeps kubelet's merges small
// (mergeBudget); a case that still takes longer is reported, not waited for.
const decideTimeout = 2 * time.Minute

// decide runs a case through a program reading it on stdin and printing a Result.
func decide(c caseformat.Case, program string, args ...string) (caseformat.Result, error) {
	in, err := json.Marshal(c)
	if err != nil {
		return caseformat.Result{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), decideTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return caseformat.Result{}, fmt.Errorf("%s: no decision within %v", program, decideTimeout)
	}
	if err != nil {
		return caseformat.Result{}, fmt.Errorf("%s: %w: %s", program, err, stderr.String())
	}
	var r caseformat.Result
	if err := json.Unmarshal(out, &r); err != nil {
		return caseformat.Result{}, fmt.Errorf("%s: %w", program, err)
	}
	return r, nil
}

type deciders struct {
	oracle, topoctl string
}

// How often kubelet decides a disagreeing case with devices again (see both).
const arbitraryRetries = 16

func (d deciders) both(c caseformat.Case) (outcome, error) {
	k, err := decide(c, d.oracle)
	if err != nil {
		return outcome{}, err
	}
	t, err := decide(c, d.topoctl, "replay", "--input-case", "-")
	if err != nil {
		return outcome{}, err
	}
	o := compare(c, k, t)
	if o.agreed || len(c.Kubelet.Devices) == 0 {
		return o, nil
	}
	// kubelet takes devices a pod's finished init containers held in Go map order, so its
	// decisions on a case with devices can change from run to run, and with them what it
	// decides later (a mask must hold every device still reusable). When one of its runs
	// takes every decision topologyd takes, topologyd decided as kubelet can.
	for i := 0; i < arbitraryRetries; i++ {
		again, err := decide(c, d.oracle)
		if err != nil {
			return outcome{}, err
		}
		if retried := compare(c, again, t); retried.agreed {
			if retried.known == "" {
				retried.known = "devices-reused-arbitrarily"
			}
			return retried, nil
		}
	}
	return o, nil
}
