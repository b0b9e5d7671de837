package resolve

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// A floor belongs to what ran and what was locked, not to a module's name.
// Renaming a module, removing it and adding it back, or moving a container
// from one module to another frees no floor: the previous lock's entries
// are floors for every module that takes over what they were held against.
//
// A module takes over a previous entry other than its own (same name) when:
//
//   - the entry recorded a container (an observed block: host and
//     container) that the module takes over now: one its runs_on names on
//     that host (a container name; a Kubernetes workload, and container;
//     a Compose service, whose containers are "<project>-<service>-<n>" or
//     "<project>_<service>_<n>"), or one it observes there now;
//   - or the entry is retired, or its module left the catalogue since
//     the lock was written, it names the module's repository, and it was
//     read on one of the module's runs_on hosts without recording a
//     container there (the same repository on the same host: which
//     container it was for there, the entry does not say), or it was
//     read on no host at all (every host of it was skipped: where it ran
//     is not known, so any module of its repository takes it over);
//   - or the entry is retired under the module's own name (removed, then
//     added back);
//   - or the entry is another lock's (Input.Record.Elsewhere: another
//     environment's, whose host is this one's now), taken over as a
//     retired entry is by the rules above, and also when it is the
//     module's own entry there (same name) held against one of its
//     runs_on hosts, whatever container it recorded.
//
// An entry that recorded containers is tied to them, not to its
// repository: two modules of one repository on one host (two databases)
// do not take over each other's floors. When the entry names another
// repository (a module moved to a mirror), its digest is read from the
// module's registry like any floor's; what it cannot read holds the floor
// up and is never kept.
//
// The entry taken over is a floor as the module's own previous entry is:
// its digest's content is read and ordered (its version line is not
// checked: the module that wrote it may have had another versioning), it
// may be kept (copied under the module's name) when it is the newest, and
// the allow_downgrade words it spent stay spent for the module. A retired
// entry leaves the lock when a module that takes it over is decided; one
// nobody takes over stays (lock.Lock.Retired), shown in every plan.

// heirs indexes the previous lock's entries by what they were held
// against, so that finding the entries a module takes over costs the same
// per module whatever the lock's size.
type heirs struct {
	old *lock.Lock
	// byContainer: host → container → the entries (modules and retired)
	// that recorded it.
	byContainer map[string]map[string][]*lock.Module
	// unplaced: repository → host → the entries of it, of modules no
	// longer in the catalogue (retired or not), that were read on the
	// host and recorded no container there.
	unplaced map[string]map[string][]*lock.Module
	retired  map[*lock.Module]bool
	// elsewhere: an entry of another lock (Input.Record.Elsewhere) → that lock;
	// elsewhereByName: those entries by their module's name.
	elsewhere       map[*lock.Module]string
	elsewhereByName map[string][]*lock.Module
}

// newHeirs indexes old's entries, and those of other locks held against
// this catalogue's hosts (elsewhere); c is the catalogue the run decides.
func newHeirs(old *lock.Lock, c *catalogue.Catalogue, elsewhere []Foreign) *heirs {
	h := &heirs{old: old, byContainer: map[string]map[string][]*lock.Module{}, unplaced: map[string]map[string][]*lock.Module{}, retired: map[*lock.Module]bool{}, elsewhere: map[*lock.Module]string{}}
	if old == nil {
		old = &lock.Lock{}
		h.old = old
	}
	add := func(e *lock.Module) {
		for _, ob := range e.Observed {
			byName := h.byContainer[ob.Host]
			if byName == nil {
				byName = map[string][]*lock.Module{}
				h.byContainer[ob.Host] = byName
			}
			if !slices.Contains(byName[ob.Container], e) {
				byName[ob.Container] = append(byName[ob.Container], e)
			}
		}
	}
	// What an entry of a module that left the catalogue was held against
	// on a host where it recorded no container: its repository there.
	place := func(e *lock.Module) {
		if len(e.Hosts) == 0 {
			// Read on none of its hosts (each was skipped): where it
			// ran is not known, so its repository anywhere.
			if h.unplaced[e.Image] == nil {
				h.unplaced[e.Image] = map[string][]*lock.Module{}
			}
			h.unplaced[e.Image][""] = append(h.unplaced[e.Image][""], e)
		}
		for _, host := range e.Hosts {
			if slices.ContainsFunc(e.Observed, func(o lock.Observation) bool { return o.Host == host }) {
				continue
			}
			if h.unplaced[e.Image] == nil {
				h.unplaced[e.Image] = map[string][]*lock.Module{}
			}
			h.unplaced[e.Image][host] = append(h.unplaced[e.Image][host], e)
		}
	}
	for _, e := range old.Modules {
		add(e)
		if c != nil && c.Module(e.Name) == nil {
			place(e)
		}
	}
	for _, e := range old.Retired {
		add(e)
		h.retired[e] = true
		place(e)
	}
	// Another lock's entry is taken over as a retired one is: by the
	// containers it recorded, or by its repository on a host it was read
	// on. Whatever its name: its module here is another environment's.
	for _, f := range elsewhere {
		if _, ok := h.elsewhere[f.Entry]; ok || old.Module(f.Entry.Name) == f.Entry || old.RetiredEntry(f.Entry.Name) == f.Entry {
			continue
		}
		add(f.Entry)
		place(f.Entry)
		h.elsewhere[f.Entry] = f.Lock
		if h.elsewhereByName == nil {
			h.elsewhereByName = map[string][]*lock.Module{}
		}
		h.elsewhereByName[f.Entry.Name] = append(h.elsewhereByName[f.Entry.Name], f.Entry)
	}
	return h
}

// heirIndex returns the index of in.Old, made once per run where the run
// made it (Resolve, Outdated), else the last one made for the same lock
// and catalogue (Judge: an admission server loads both once and judges
// many requests against them), else now.
func (in Input) heirIndex() *heirs {
	if in.heirs != nil {
		return in.heirs
	}
	lastHeirs.Lock()
	defer lastHeirs.Unlock()
	if lastHeirs.h == nil || lastHeirs.old != in.Old || lastHeirs.cat != in.Catalogue || !slices.Equal(lastHeirs.elsewhere, in.Record.Elsewhere) {
		lastHeirs.h, lastHeirs.old, lastHeirs.cat = newHeirs(in.Old, in.Catalogue, in.Record.Elsewhere), in.Old, in.Catalogue
		lastHeirs.elsewhere = in.Record.Elsewhere
	}
	return lastHeirs.h
}

// lastHeirs is the index heirIndex made last, and for what. A lock and a
// catalogue are read-only once loaded.
var lastHeirs struct {
	sync.Mutex
	old       *lock.Lock
	cat       *catalogue.Catalogue
	elsewhere []Foreign
	h         *heirs
}

// takenOver lists the previous entries, other than m's own, whose floors
// m takes over (see above), by name, retired ones after modules of the
// same name.
func (h *heirs) takenOver(m *catalogue.Module, obs []observe.Observation) []*lock.Module {
	own := h.old.Module(m.Name)
	var out []*lock.Module
	add := func(e *lock.Module) {
		if e != own && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	if r := h.old.RetiredEntry(m.Name); r != nil {
		add(r)
	}
	for _, o := range obs {
		for _, e := range h.byContainer[o.Host][o.Container] {
			add(e)
		}
	}
	for _, ro := range m.RunsOn {
		for name, es := range h.byContainer[ro.Host] {
			if covers(ro, name) {
				for _, e := range es {
					add(e)
				}
			}
		}
	}
	for _, ro := range m.RunsOn {
		for _, e := range h.unplaced[m.Image][ro.Host] {
			add(e)
		}
	}
	if len(m.RunsOn) > 0 {
		for _, e := range h.unplaced[m.Image][""] {
			add(e)
		}
	}
	// Another lock's entry of this very module, held against one of its
	// hosts: its own entry there, whatever container it recorded (the
	// module's entry is a floor by name, wherever the host now is).
	for _, e := range h.elsewhereByName[m.Name] {
		if slices.ContainsFunc(m.RunsOn, func(ro catalogue.RunsOn) bool { return knowsHost(e, ro.Host) }) {
			add(e)
		}
	}
	slices.SortFunc(out, func(a, b *lock.Module) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if c := boolInt(h.retired[a]) - boolInt(h.retired[b]); c != 0 {
			return c
		}
		return strings.Compare(h.elsewhere[a], h.elsewhere[b])
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// covers reports whether runs_on ro names a container a lock recorded as
// name on ro's host: the container it names, the observations of the
// workload it names ("<kind>/<name>/<container>"), or the containers
// Compose makes for the service it names. A runs_on that takes over by
// label or selector names no container: what it observes now is matched
// instead.
func covers(ro catalogue.RunsOn, name string) bool {
	switch {
	case ro.Compose != "":
		project, service, _ := strings.Cut(ro.Compose, "/")
		for _, sep := range []string{"-", "_"} {
			if n, ok := strings.CutPrefix(name, project+sep+service+sep); ok && n != "" && strings.Trim(n, "0123456789") == "" {
				return true
			}
		}
		return false
	case ro.Workload != "":
		rest, ok := strings.CutPrefix(name, ro.Workload+"/")
		return ok && (ro.Container == "" || rest == ro.Container)
	case ro.Selector != nil:
		return false
	}
	return ro.Container != "" && name == ro.Container
}

// inheritedFloors reads the entries m takes over as floors: each by its
// digest's content (with m's registry and ordering options), its lines
// believed only where the content cannot be had. Their claims are held up
// like the previous entry's.
func inheritedFloors(ctx context.Context, reg Registry, m *catalogue.Module, entries []*lock.Module, h *heirs, opts order.Options, platform string) ([]Floor, error) {
	var out []Floor
	for _, e := range entries {
		img, state, err := inheritedImage(ctx, reg, m, e, opts, platform)
		if err != nil {
			return nil, err
		}
		out = append(out, Floor{Kind: FloorInherited, Image: img, Entry: e, Retired: h.retired[e], Elsewhere: h.elsewhere[e], content: state})
	}
	return out, nil
}

// inheritedImage is lockedImage for an entry another module wrote: its
// version line is left unchecked (that module may have read versions
// under another versioning), everything else is checked.
func inheritedImage(ctx context.Context, reg Registry, m *catalogue.Module, e *lock.Module, opts order.Options, platform string) (image.Image, contentState, error) {
	c := *e
	c.Version = ""
	img, state, err := lockedImage(ctx, reg, m, &c, opts, platform)
	if err != nil {
		return image.Image{}, state, fmt.Errorf("the previous lock's entry for module %q, whose floor module %q takes over: %w", e.Name, m.Name, err)
	}
	if state != contentRead {
		return claimedImage(e), state, nil
	}
	img.Repository = m.Image // read from the module's registry
	return img, state, nil
}

// inheritsOn reports whether m takes over an entry of another lock
// (Input.Record.Elsewhere) held against in.Record.Host: the host moved in, and what
// ran on it is a floor the module's own entry was never held to. Reading
// that host decides the module, then, rather than keeping its entry.
func inheritsOn(in Input, m *catalogue.Module) bool {
	if len(in.Record.Elsewhere) == 0 {
		return false
	}
	idx := in.heirIndex()
	for _, e := range idx.takenOver(m, nil) {
		if idx.elsewhere[e] != "" && knowsHost(e, in.Record.Host) {
			return true
		}
	}
	return false
}
