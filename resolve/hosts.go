package resolve

import (
	"slices"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/lock"
)

// Which hosts a lock was held against. A lock records them (lock.Lock.Hosts
// for the catalogue, lock.Module.Hosts for a module's runs_on), so that "pin
// lock --from-host H", which reads H alone, can tell a host that runs
// nothing from one nobody has read.

// hostsRead are the catalogue hosts whose containers a lock this run
// writes is held against, for every module: every host read (Input.Record),
// and those the previous lock was held against (what it recorded on a host
// not read stays a floor and in the entry); when the record names the
// modules decided (Record.Only), those the previous lock was held against
// alone (the hosts were read, but only the named modules decided against
// them: every other entry stays what it was, and a host the lock was not
// held against stays unknown to them). A host not read is never recorded
// as read.
func hostsRead(in Input) []string {
	held := func(h string) bool { return in.Old != nil && slices.Contains(in.Old.Hosts, h) }
	var out []string
	for _, h := range in.Catalogue.Hosts {
		if held(h.Name) || in.Record.ReadForEvery(h.Name) {
			out = append(out, h.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// entryHosts are the runs_on hosts of m whose containers an entry written
// now is held against: those this run read (Input.Record), and those the
// previous entry knew. Sorted, each once.
func entryHosts(m *catalogue.Module, old *lock.Module, in Input) []string {
	var out []string
	for _, ro := range m.RunsOn {
		if in.Record.Read(ro.Host) || knowsHost(old, ro.Host) {
			out = append(out, ro.Host)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// unknownHosts lists, for "lock --from-host in.Record.Host", the hosts whose
// floors for module m nobody knows: a runs_on host the previous entry old
// does not say it read (one that joined runs_on since, or any when there
// is no entry yet), and a catalogue host the previous lock was not held
// against (added since: any module may run there, by its pin.module label)
// unless the entry knows it; for a module with no entry (new, or renamed),
// every other catalogue host: the lock's hosts line says which hosts the
// lock was held against for the modules it decided, and this one it did
// not decide. In runs_on order, then catalogue order.
func unknownHosts(in Input, m *catalogue.Module, old *lock.Module) []string {
	var out []string
	add := func(h string) {
		if h != in.Record.Host && !slices.Contains(out, h) && !knowsHost(old, h) {
			out = append(out, h)
		}
	}
	for _, ro := range m.RunsOn {
		add(ro.Host)
	}
	for _, h := range in.Catalogue.Hosts {
		if old == nil || in.Old == nil || !slices.Contains(in.Old.Hosts, h.Name) {
			add(h.Name)
		}
	}
	return out
}

// knowsHost reports whether entry old says what host ran: read when it was
// written, or recorded in an observed block (entries written before pin
// recorded the hosts it read).
func knowsHost(old *lock.Module, host string) bool {
	if old == nil {
		return false
	}
	return slices.Contains(old.Hosts, host) || slices.ContainsFunc(old.Observed, func(o lock.Observation) bool { return o.Host == host })
}

func hasHost(m *catalogue.Module, host string) bool {
	return slices.ContainsFunc(m.RunsOn, func(ro catalogue.RunsOn) bool { return ro.Host == host })
}
