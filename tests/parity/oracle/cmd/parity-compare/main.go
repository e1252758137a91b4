// Command parity-compare draws seeded random parity cases, runs each through kubelet's own
// managers (kubelet-oracle) and through topologyd (`topoctl replay`), and stops at the first
// disagreement, printing the case reduced as far as it goes (docs/testing.md, parity).
//
//	parity-compare --oracle BIN --topoctl BIN [--corpus DIR] [--seed S] [--count N]
//
// Exit 0 when every case agreed (or showed a documented difference, counted by name), 1 on a
// disagreement, 2 on bad usage or when a program failed.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"

	"topologyd.test/parity/oracle/caseformat"
)

func main() {
	oracle := flag.String("oracle", "", "the kubelet-oracle program")
	topoctl := flag.String("topoctl", "", "the topoctl program")
	corpus := flag.String("corpus", "", "a directory of recorded hwloc XML machines (optional)")
	seed := flag.Uint64("seed", 1, "the seed of the cases")
	first := flag.Uint64("first", 0, "the first case number")
	count := flag.Uint64("count", 100, "how many cases")
	maxNUMA := flag.Int("max-numa", 8, "leave out machines with more NUMA nodes")
	save := flag.String("save", "", "write a disagreeing case (reduced) to this file")
	flag.Parse()
	if *oracle == "" || *topoctl == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(run(deciders{*oracle, *topoctl}, *corpus, *seed, *first, *count, *maxNUMA, *save))
}

func podOf(o caseformat.Operation) string {
	if o.Remove != "" {
		return o.Remove
	}
	var p struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(o.Admit, &p)
	return p.Metadata.UID
}

func run(d deciders, corpus string, seed, first, count uint64, maxNUMA int, save string) int {
	ms, err := newMachines(d.topoctl, corpus, maxNUMA)
	if err != nil {
		fmt.Fprintln(os.Stderr, "parity-compare:", err)
		return 2
	}
	known := map[string]int{}
	setup, operations := 0, 0
	for i := first; i < first+count; i++ {
		c, name, err := generate(ms, seed, i)
		if err != nil {
			fmt.Fprintln(os.Stderr, "parity-compare:", err)
			return 2
		}
		o, err := d.both(c)
		if err != nil {
			fmt.Fprintf(os.Stderr, "parity-compare: seed %d case %d (%s): %v\n", seed, i, name, err)
			return 2
		}
		if !o.agreed {
			fmt.Printf("DISAGREEMENT: seed %d case %d, machine %s\n%s\n", seed, i, name, o.different)
			small := reduce(d, c)
			if r, err := d.both(small); err == nil {
				fmt.Printf("reduced to %d of %d operations:\n%s\n", len(small.Operations), len(c.Operations), r.different)
			}
			text, _ := json.MarshalIndent(small, "", " ")
			if save != "" {
				if err := os.WriteFile(save, append(text, '\n'), 0o644); err != nil {
					fmt.Fprintln(os.Stderr, "parity-compare:", err)
				}
				fmt.Printf("case written to %s\n", save)
			} else {
				fmt.Printf("case:\n%s\n", text)
			}
			return 1
		}
		operations += len(c.Operations)
		if o.setup {
			setup++
		}
		if o.known != "" {
			known[o.known]++
		}
	}
	fmt.Printf("seed %d: %d cases (%d operations) agreed; %d configurations refused by both", seed, count, operations, setup)
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Printf("; %d %s", known[n], n)
	}
	fmt.Println()
	return 0
}
