package promote

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/lock"
)

func matrixOf(w *world, upstream map[string]map[string]image.Image, locks map[string]*lock.Lock) []Row {
	w.obs.Index()
	w.to.From = w.from.Name
	return Matrix(MatrixInput{Catalogue: w.cat, Envs: []Env{w.from, w.to}, Observed: w.obs, Record: recordOf(w.obs), Locks: locks, Upstream: upstream, Now: now})
}

func statuses(c Cell) string {
	var s []string
	for _, st := range c.Statuses {
		s = append(s, string(st))
	}
	return strings.Join(s, ",")
}

// TestMatrix: each cell's statuses, counts and times, as the world was
// built: staging runs 1.28.0 everywhere and locks it; production locks
// 1.27.3 and runs it on p1, 1.27.2 on p2; upstream offers 1.29.0.
func TestMatrix(t *testing.T) {
	w := newWorld("web", "db")
	w.run("s1", "web", "1.28.0", 50*time.Hour, 0)
	w.run("s2", "web", "1.28.0", 30*time.Hour, 0)
	w.run("p1", "web", "1.27.3", 90*time.Hour, 0)
	w.run("p2", "web", "1.27.2", 0, 0)
	w.run("s1", "db", "16.5", 10*time.Hour, 0)
	w.run("p1", "db", "16.5", 10*time.Hour, 0)
	staging := &lock.Lock{Modules: []*lock.Module{{Name: "web", Image: registry + "web", Tag: "1.28.0", Digest: digestOf("web", "1.28.0")}}}
	w.lockTo("web", "1.27.3").Hold = "waiting for the migration"
	w.lockTo("db", "16.5")
	w.obs.Errors["s2"] = errors.New("refused") // s2 runs db too: not read
	up := image.Image{Repository: registry + "web", Tag: "1.29.0", Digest: digestOf("web", "1.29.0")}
	rows := matrixOf(w, map[string]map[string]image.Image{"staging": {"web": up}, "production": {"web": up}}, map[string]*lock.Lock{"staging": staging, "production": w.old})
	if len(rows) != 2 || rows[0].Module != "web" || len(rows[0].Cells) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	ws, wp := rows[0].Cells[0], rows[0].Cells[1]
	if ws.Env != "staging" || statuses(ws) != "behind-upstream,host-not-read" || ws.Hosts != 2 || len(ws.Runs) != 1 || ws.Runs[0].Containers != 2 ||
		!ws.Since.Equal(now.Add(-30*time.Hour)) || ws.Upstream == nil || ws.Upstream.Digest != up.Digest || ws.Previous != nil {
		t.Errorf("web/staging: %s %+v", statuses(ws), ws)
	}
	if statuses(wp) != "skew,behind-previous,behind-upstream,not-rolled-out,held" || wp.Hosts != 2 || len(wp.Runs) != 2 ||
		!wp.Since.IsZero() || wp.Previous == nil || wp.Previous.Digest != digestOf("web", "1.28.0") {
		t.Errorf("web/production: %s %+v", statuses(wp), wp)
	}
	ds, dp := rows[1].Cells[0], rows[1].Cells[1]
	if statuses(ds) != "not-locked,host-not-read" || statuses(dp) != "" || dp.Hosts != 1 || !dp.Since.Equal(now.Add(-10*time.Hour)) {
		t.Errorf("db: staging %s %+v, production %s %+v", statuses(ds), ds, statuses(dp), dp)
	}

	// Production caught up: locks and runs what staging runs.
	w = newWorld("web")
	w.run("s1", "web", "1.28.0", 50*time.Hour, 0)
	w.run("p1", "web", "1.28.0", 5*time.Hour, 0)
	w.lockTo("web", "1.28.0")
	rows = matrixOf(w, nil, map[string]*lock.Lock{"production": w.old})
	if c := rows[0].Cells[1]; statuses(c) != "" || c.Previous != nil {
		t.Errorf("caught up: %s", statuses(c))
	}
	// An upstream build that cannot be ordered (no version, no date) is
	// not newer; a previous environment that skews says nothing of what
	// is due.
	w = newWorld("web")
	w.run("s1", "web", "1.29.0", 50*time.Hour, 0)
	w.run("s2", "web", "1.28.0", 50*time.Hour, 0)
	w.run("p1", "web", "1.27.0", 5*time.Hour, 0)
	w.lockTo("web", "1.27.0")
	rows = matrixOf(w, map[string]map[string]image.Image{"production": {"web": {Repository: registry + "web", Tag: "latest", Digest: digestOf("web", "latest")}}}, map[string]*lock.Lock{"production": w.old})
	if c := rows[0].Cells[1]; statuses(c) != "" {
		t.Errorf("unordered upstream, skewed staging: %s", statuses(c))
	}
	if c := rows[0].Cells[0]; !c.Has(StatusSkew) {
		t.Errorf("staging: %s", statuses(c))
	}
	// A module that runs nowhere has no row.
	w.cat.Modules[0].RunsOn = nil
	if rows := matrixOf(w, nil, nil); len(rows) != 0 {
		t.Errorf("rows %+v", rows)
	}
}
