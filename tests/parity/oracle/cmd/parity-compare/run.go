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

func (d deciders) both(c caseformat.Case) (outcome, error) {
	k, err := decide(c, d.oracle)
	if err != nil {
		return outcome{}, err
	}
	t, err := decide(c, d.topoctl, "replay", "--input-case", "-")
	if err != nil {
		return outcome{}, err
	}
	return compare(c, k, t), nil
}
