package promote

import (
	"slices"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// Status is a finding of the drift matrix about one module in one
// environment.
type Status string

const (
	// StatusSkew: the environment's hosts run different builds.
	StatusSkew Status = "skew"
	// StatusBehindPrevious: the environment builds come from runs a
	// newer build than this one locks (a promotion is due).
	StatusBehindPrevious Status = "behind-previous"
	// StatusBehindUpstream: upstream offers a newer build than the
	// environment locks.
	StatusBehindUpstream Status = "behind-upstream"
	// StatusNotRolledOut: a host runs another build than the lock names.
	StatusNotRolledOut Status = "not-rolled-out"
	// StatusNotLocked: hosts run the module and the environment's lock
	// has no entry for it.
	StatusNotLocked Status = "not-locked"
	// StatusHeld: the entry is held by a manual pick.
	StatusHeld Status = "held"
	// StatusUnread: a host of the environment that runs the module was
	// not read (unreachable, or skipped under skip_unreachable).
	StatusUnread Status = "host-not-read"
)

// Statuses lists the statuses in the order reports name them.
var Statuses = []Status{StatusSkew, StatusUnhealthy, StatusBehindPrevious, StatusBehindUpstream, StatusNotRolledOut, StatusNotLocked, StatusHeld, StatusUnread}

// MatrixInput is what the drift matrix reads.
type MatrixInput struct {
	Catalogue *catalogue.Catalogue
	// Envs are the environments, in the catalogue's order.
	Envs     []Env
	Observed observe.Observed
	// Record says which hosts were not read, and why: a cell with one of
	// them is not complete (StatusUnread).
	Record resolve.Record
	// Locks holds each environment's lock, by name (nil: none yet).
	Locks map[string]*lock.Lock
	// Upstream is the newest build upstream offers of a module within
	// its policy, by environment name, then module name, where it was
	// asked (as pin outdated asks it, by the environment's lock); absent:
	// not known.
	Upstream map[string]map[string]image.Image
	Now      time.Time
}

// Build is one build running in an environment, and where.
type Build struct {
	Image image.Image
	// Hosts run it (sorted, each once); Containers counts them.
	Hosts      []string
	Containers int
}

// Cell is one module in one environment.
type Cell struct {
	Module, Env string
	// Locked is the environment's entry for the module; nil for none.
	Locked *lock.Module
	// Runs are the builds the environment's hosts run, the most
	// containers first; Hosts counts the hosts that run the module.
	Runs  []Build
	Hosts int
	// Since is when the last of the running containers started: every
	// one has run since (zero when a start is not known).
	Since time.Time
	// Previous is the build the environment builds come from runs, when
	// it is newer than what this one locks (StatusBehindPrevious);
	// Upstream upstream's newer build (StatusBehindUpstream).
	Previous, Upstream *image.Image
	Unread             []string
	// Unhealthy are the containers of the module on the environment's
	// hosts that do not run healthy (StatusUnhealthy), as a promotion
	// from it would find them: the engines' words, since when.
	Unhealthy []Finding
	Statuses  []Status
}

// Has reports whether c carries status s.
func (c Cell) Has(s Status) bool { return slices.Contains(c.Statuses, s) }

// Row is one module across the environments it runs in, in order.
type Row struct {
	Module string
	Cells  []Cell
}

// Matrix draws the drift matrix: a row per catalogue module (in
// catalogue order), a cell per environment its runs_on names. Builds
// are ordered as package resolve orders a module's images.
func Matrix(in MatrixInput) []Row {
	var rows []Row
	for _, m := range in.Catalogue.Modules {
		obs, _ := observe.Observations(m, in.Observed)
		opts := resolve.OrderOptions(m, in.Now)
		row := Row{Module: m.Name}
		for _, env := range in.Envs {
			if runsIn(m, env) {
				row.Cells = append(row.Cells, cell(m, env, obs, in))
			}
		}
		cells := map[string]*Cell{}
		for i := range row.Cells {
			cells[row.Cells[i].Env] = &row.Cells[i]
		}
		for _, env := range in.Envs {
			c := cells[env.Name]
			if c == nil {
				continue
			}
			mine := c.current()
			if up, ok := in.Upstream[env.Name][m.Name]; ok && mine != nil && newer(up, *mine, opts) {
				c.Upstream = &up
				c.Statuses = append(c.Statuses, StatusBehindUpstream)
			}
			if prev := cells[env.From]; prev != nil && mine != nil && len(prev.Runs) == 1 && newer(prev.Runs[0].Image, *mine, opts) {
				p := prev.Runs[0].Image
				c.Previous = &p
				c.Statuses = append(c.Statuses, StatusBehindPrevious)
			}
			slices.SortFunc(c.Statuses, func(a, b Status) int { return slices.Index(Statuses, a) - slices.Index(Statuses, b) })
		}
		if len(row.Cells) > 0 {
			rows = append(rows, row)
		}
	}
	return rows
}

// cell is module m in env, without the comparisons across environments.
func cell(m *catalogue.Module, env Env, obs []observe.Observation, in MatrixInput) Cell {
	c := Cell{Module: m.Name, Env: env.Name, Locked: in.Locks[env.Name].Module(m.Name)}
	for _, h := range hostsOf(m, env) {
		if _, ok := in.Record.Unread(h); ok {
			c.Unread = append(c.Unread, h)
		}
	}
	hosts := map[string]bool{}
	startKnown := true
	for _, o := range obs {
		if !env.has(o.Host) || !o.Running() {
			continue
		}
		hosts[o.Host] = true
		key := cmpKey(o.Image)
		i := slices.IndexFunc(c.Runs, func(b Build) bool { return cmpKey(b.Image) == key })
		if i < 0 {
			c.Runs = append(c.Runs, Build{Image: o.Image})
			i = len(c.Runs) - 1
		}
		b := &c.Runs[i]
		b.Containers++
		if !slices.Contains(b.Hosts, o.Host) {
			b.Hosts = append(b.Hosts, o.Host)
			slices.Sort(b.Hosts)
		}
		if o.StartedAt.IsZero() {
			startKnown = false
		} else if o.StartedAt.After(c.Since) {
			c.Since = o.StartedAt
		}
	}
	if !startKnown {
		c.Since = time.Time{}
	}
	c.Hosts = len(hosts)
	slices.SortStableFunc(c.Runs, func(a, b Build) int { return b.Containers - a.Containers })
	if len(c.Runs) > 1 {
		c.Statuses = append(c.Statuses, StatusSkew)
	}
	if len(c.Runs) > 0 {
		if c.Unhealthy, _ = Unhealthy(env, obs, nil, 0, in.Now); len(c.Unhealthy) > 0 {
			c.Statuses = append(c.Statuses, StatusUnhealthy)
		}
	}
	switch {
	case c.Locked == nil && len(c.Runs) > 0:
		c.Statuses = append(c.Statuses, StatusNotLocked)
	case c.Locked != nil && slices.ContainsFunc(c.Runs, func(b Build) bool { return b.Image.Digest != c.Locked.Digest }):
		c.Statuses = append(c.Statuses, StatusNotRolledOut)
	}
	if c.Locked != nil && c.Locked.Hold != "" {
		c.Statuses = append(c.Statuses, StatusHeld)
	}
	if len(c.Unread) > 0 {
		c.Statuses = append(c.Statuses, StatusUnread)
	}
	return c
}

func cmpKey(img image.Image) string {
	if img.Digest != "" {
		return img.Digest
	}
	return img.ImageID
}

// current is what the environment has of the module: what it locks, else
// the one build it runs; nil when neither.
func (c Cell) current() *image.Image {
	if c.Locked != nil {
		img := EntryImage(c.Locked)
		return &img
	}
	if len(c.Runs) == 1 {
		return &c.Runs[0].Image
	}
	return nil
}

// newer reports whether a is newer than b, as resolve orders them; the
// same digest is never newer, and an order not known is not newer.
func newer(a, b image.Image, opts order.Options) bool {
	if a.Digest != "" && a.Digest == b.Digest {
		return false
	}
	return order.Compare(a, b, opts).Cmp == order.Newer
}

// EntryImage is what a lock entry says of its image, from its lines.
func EntryImage(e *lock.Module) image.Image {
	img := image.Image{Repository: e.Image, Tag: e.Tag, Digest: e.Digest, ConfigDigest: e.Config, Platforms: e.Platforms, Created: e.Created}
	if e.Version != "" {
		img.Labels = map[string]string{image.LabelVersion: e.Version}
	}
	return img
}
