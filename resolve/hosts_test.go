package resolve

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/observe"
)

// TestObserveHostsKeepsOtherHosts checks that a failing host does not hide
// the others' answers.
func TestObserveHostsKeepsOtherHosts(t *testing.T) {
	seen := observe.Hosts(context.Background(), map[string]observe.Host{
		"up":   hostFunc(func() (*host.Snapshot, error) { return &host.Snapshot{Host: "up"}, nil }),
		"down": hostFunc(func() (*host.Snapshot, error) { return nil, fmt.Errorf("connection refused") }),
	})
	if seen.Snapshots["up"] == nil || seen.Errors["down"] == nil || len(seen.Snapshots) != 1 {
		t.Fatalf("observed = %+v", seen)
	}
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning, RunsOn: []catalogue.RunsOn{{Host: "down", Container: "svc"}}}
	p := Resolve(context.Background(), Input{Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{m}}, Observed: seen, Now: time.Now()})
	if p.Decisions[0].Err() == nil || !strings.Contains(p.Decisions[0].Err().Error(), "host down: connection refused") {
		t.Fatalf("module on a failed host: err = %v", p.Decisions[0].Err())
	}
}

type hostFunc func() (*host.Snapshot, error)

func (f hostFunc) Observe(context.Context) (*host.Snapshot, error) { return f() }
