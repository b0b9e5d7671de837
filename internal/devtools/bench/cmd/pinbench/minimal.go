package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// minimalPlan is what internal/devtools/bench/cmd/minclient reads: per module, the
// requests of the cost model's floor for command, cold or warm (the same
// that project.floor counts), in catalogue order.
type minimalPlan struct {
	Registry string          `json:"registry"`
	Modules  []minimalModule `json:"modules"`
}

type minimalModule struct {
	Repo     string   `json:"repo"`
	List     bool     `json:"list,omitempty"`
	Describe []string `json:"describe,omitempty"`
	Head     []string `json:"head,omitempty"`
}

// planFor is the minimal client's work for command on fleet, through the
// proxy at addr.
func planFor(addr, command string, warm bool, fleet []*seeded) minimalPlan {
	plan := minimalPlan{Registry: addr}
	for _, s := range fleet {
		p := s.p
		m := minimalModule{Repo: p.Repo}
		switch {
		case p.Policy == "at-least-running":
			// What runs is known by digest, and so is the pin: resolve
			// reads both by digest cold and asks nothing warm; outdated
			// also lists tags, and warm asks the newest tag again.
			m.List = command == "outdated"
			if !warm {
				m.Describe = []string{"@" + s.at(p.Want).digest, "@" + s.at(p.Pin).digest}
			} else if command == "outdated" {
				m.Head = []string{":" + p.Want}
			}
		case p.Follow != "":
			if warm {
				m.Head = []string{":" + p.Follow}
			} else {
				m.Describe = []string{":" + p.Follow}
			}
		default:
			m.List = true
			if warm {
				m.Head = []string{":" + p.Want}
			} else {
				m.Describe = []string{":" + p.Want}
			}
		}
		plan.Modules = append(plan.Modules, m)
	}
	return plan
}

// runMinimal runs the minimal client on the plan for command, measured as
// pin is (runPin).
func runMinimal(bin, addr, command string, warm bool, c int, fleet []*seeded, logs string) (wall time.Duration, rss int64, cpu time.Duration, err error) {
	cache := "cold"
	if warm {
		cache = "warm"
	}
	path := filepath.Join(logs, fmt.Sprintf("minimal-%s-%s.json", command, cache))
	b, err := json.Marshal(planFor(addr, command, warm, fleet))
	if err != nil {
		return 0, 0, 0, err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return 0, 0, 0, err
	}
	base := filepath.Join(logs, fmt.Sprintf("minimal-%s-%s-c%d", command, cache, c))
	wall, rss, cpu, exit, stderr, err := runPin(bin, logs, base, path, strconv.Itoa(c))
	if err == nil && exit != 0 {
		err = fmt.Errorf("minimal client: exit %d: %s", exit, lastLines(stderr, 3))
	}
	return wall, rss, cpu, err
}
