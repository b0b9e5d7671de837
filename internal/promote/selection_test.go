package promote

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
)

// TestNamedModuleMustRunInTO: a module named for promotion whose runs_on
// names no host of TO is a request to fix, not a promotion: its entry
// would be held against no host of TO (and retired by the next resolve).
// An automatic promotion leaves it out; naming it is ErrInput, nothing
// decided.
func TestNamedModuleMustRunInTO(t *testing.T) {
	w := newWorld("api")
	canary := &catalogue.Module{Name: "canary", Image: registry + "canary", Policy: catalogue.AtLeastRunning,
		RunsOn: []catalogue.RunsOn{{Host: "s1", Container: "canary"}}}
	w.cat.Modules = append(w.cat.Modules, canary)
	for _, h := range []string{"s1", "s2"} {
		w.run(h, "api", "1.2.0", 48*time.Hour, 0)
	}
	w.run("s1", "canary", "0.9.0", 48*time.Hour, 0)

	res, err := Promote(context.Background(), w.input("canary"))
	if !errors.Is(err, ErrInput) || res != nil || !strings.Contains(err.Error(), `module "canary" does not run in environment production`) {
		t.Fatalf("promote canary: %v, %+v; want ErrInput naming it", err, res)
	}
	res, err = Promote(context.Background(), w.input())
	if err != nil || res.Refused() {
		t.Fatalf("promote all: %v %+v", err, res)
	}
	if res.Lock().Module("canary") != nil || res.Lock().Module("api") == nil {
		t.Errorf("an automatic promotion: api %v, canary %v; want api alone", res.Lock().Module("api"), res.Lock().Module("canary"))
	}
}
