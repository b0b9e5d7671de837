package catalogue

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Environment is a set of hosts that share a lock of their own (dev,
// staging, production): each environment's floors are its own hosts and
// its own previous entries, so that staging running an older build never
// lowers production's lock, and production's never holds staging's.
type Environment struct {
	Name  string
	Hosts []string
	// From is the environment builds are promoted from ("pin promote FROM
	// NAME"); empty when none is.
	From string
	// Soak is how long a build must have run on From's hosts before it is
	// promoted here; zero when no soak is asked.
	Soak time.Duration
	// Require is what a build must have shown on every host of From that
	// runs it before it is promoted here (see Requirements): nil when
	// the catalogue does not say, which is every requirement. A list
	// always holds RequireRunning.
	Require   []string
	DeclRange hcl.Range
}

// What an environment may require of a build on the hosts of the
// environment it is promoted from (require = [...]).
const (
	// RequireRunning: every container of the module runs (not exited,
	// dead, restarting or paused). Always required.
	RequireRunning = "running"
	// RequireHealthy: a container with a health check is healthy
	// ("starting" is not yet).
	RequireHealthy = "healthy"
	// RequireReady: a Kubernetes pod is Ready.
	RequireReady = "ready"
	// RequireNoRestart: no container was restarted by its engine within
	// the environment's soak.
	RequireNoRestart = "no-restart"
)

// Requirements lists every requirement, in the order messages name them:
// what an environment without require asks.
var Requirements = []string{RequireRunning, RequireHealthy, RequireReady, RequireNoRestart}

// Requires reports whether the environment asks requirement r of a build
// before it is promoted here.
func (e *Environment) Requires(r string) bool {
	return e.Require == nil || slices.Contains(e.Require, r)
}

var environmentSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "hosts", Required: true}, {Name: "from"}, {Name: "soak"}, {Name: "require"},
}}

// environmentName is what an environment may be called: its name is part
// of its lock file's name (pin.lock.NAME.hcl), so lower case (a
// case-insensitive file system would merge "Prod" and "prod"), no dot, no
// path separator.
var environmentName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// envDecl is an environment block as written, for cross-checks.
type envDecl struct {
	env         *Environment
	hostsRanges []hcl.Range // each hosts element's range, in order
	hostsRange  hcl.Range
	fromRange   hcl.Range
}

func (l *loader) environment(b *hcl.Block) hcl.Diagnostics {
	e := &Environment{Name: b.Labels[0], DeclRange: b.DefRange}
	content, diags := b.Body.Content(environmentSchema)
	if !environmentName.MatchString(e.Name) {
		diags = append(diags, errorf(b.LabelRanges[0], "Invalid environment name", "%q cannot name an environment: its lock file is pin.lock.<name>.hcl. Use lower-case letters, digits, '_' and '-', at most 63, starting with a letter or digit, such as \"staging\".", e.Name))
	}
	if prev, ok := l.envs[e.Name]; ok {
		diags = append(diags, errorf(b.LabelRanges[0], "Duplicate environment", "An environment named %q is already defined at %s. Give each environment a unique name, or merge the two blocks.", e.Name, prev.env.DeclRange))
		return diags
	}
	d := &envDecl{env: e}
	l.envs[e.Name] = d
	l.envOrder = append(l.envOrder, d)
	l.c.Environments = append(l.c.Environments, e)
	a := content.Attributes
	if at := a["hosts"]; at != nil {
		d.hostsRange = at.Expr.Range()
		diags = append(diags, strList(at, &e.Hosts)...)
		if exprs, ed := hcl.ExprList(at.Expr); !ed.HasErrors() && len(exprs) == len(e.Hosts) {
			for _, x := range exprs {
				d.hostsRanges = append(d.hostsRanges, x.Range())
			}
		}
	}
	if at := a["from"]; at != nil {
		d.fromRange = at.Expr.Range()
		diags = append(diags, str(at, &e.From)...)
	}
	if at := a["soak"]; at != nil {
		var text string
		if sd := str(at, &text); sd.HasErrors() {
			diags = append(diags, sd...)
		} else if soak, err := time.ParseDuration(text); err != nil || soak <= 0 {
			diags = append(diags, errorf(at.Expr.Range(), "Invalid soak", "soak of environment %q is %q: write a positive duration, such as \"24h\" or \"90m\" (how long a build must have run on every host of %s before it is promoted here).", e.Name, text, fromOr(e.From)))
		} else {
			e.Soak = soak
		}
		if a["from"] == nil {
			diags = append(diags, errorf(at.Range, "soak without from", "Environment %q promotes from no environment, so there is nothing to soak in. Write from = \"staging\" (the environment builds come from), or remove soak.", e.Name))
		}
	}
	if at := a["require"]; at != nil {
		diags = append(diags, e.require(at, a["from"] != nil)...)
	}
	return diags
}

// require reads an environment's require list: known words, each once,
// "running" among them, and only where builds come from somewhere.
func (e *Environment) require(at *hcl.Attribute, hasFrom bool) hcl.Diagnostics {
	var words []string
	diags := strList(at, &words)
	if diags.HasErrors() {
		return diags
	}
	if !hasFrom {
		return append(diags, errorf(at.Range, "require without from", "Environment %q promotes from no environment, so nothing is required of a build before it comes here. Write from = \"staging\" (the environment builds come from), or remove require.", e.Name))
	}
	list := `"` + strings.Join(Requirements, `", "`) + `"`
	for _, w := range words {
		switch {
		case !slices.Contains(Requirements, w):
			return append(diags, errorf(at.Expr.Range(), "Invalid requirement", "Environment %q requires %q, which pin does not know. Write some of %s: what a build must show on every host of %s before it is promoted here.", e.Name, w, list, fromOr(e.From)))
		case slices.Contains(e.Require, w):
			return append(diags, errorf(at.Expr.Range(), "Duplicate requirement", "Environment %q requires %q twice. Keep one.", e.Name, w))
		}
		e.Require = append(e.Require, w)
	}
	if !slices.Contains(e.Require, RequireRunning) {
		e.Require = nil
		return append(diags, errorf(at.Expr.Range(), "require without running", "Environment %q must require %q: a build that does not run on %s proves nothing. Write require = [\"running\"] to require only that, or leave require out to require all of %s.", e.Name, RequireRunning, fromOr(e.From), list))
	}
	slices.SortFunc(e.Require, func(a, b string) int { return slices.Index(Requirements, a) - slices.Index(Requirements, b) })
	return diags
}

func fromOr(from string) string {
	if from == "" {
		return "the environment it promotes from"
	}
	return fmt.Sprintf("%q", from)
}

// checkEnvironments checks what spans environment blocks and hosts: every
// host named is defined and in one environment only, every host is in
// one once any environment is declared (its floors would count nowhere),
// and from names another environment without a cycle.
func (l *loader) checkEnvironments() hcl.Diagnostics {
	if len(l.envOrder) == 0 {
		return nil
	}
	var diags hcl.Diagnostics
	owner := map[string]*envDecl{}
	for _, d := range l.envOrder {
		e := d.env
		seen := map[string]bool{}
		for i, h := range e.Hosts {
			rng := d.hostsRange
			if i < len(d.hostsRanges) {
				rng = d.hostsRanges[i]
			}
			switch {
			case seen[h]:
				diags = append(diags, errorf(rng, "Duplicate host in environment", "Environment %q names host %q twice. Keep one.", e.Name, h))
				continue
			case l.hosts[h] == nil:
				diags = append(diags, errorf(rng, "Undefined host", "Environment %q names host %q, but no host block defines it. Add host %q { … }, or fix the name.%s", e.Name, h, h, suggest(h, l.hosts)))
			case owner[h] != nil:
				diags = append(diags, errorf(rng, "Host in two environments", "Host %q is in environment %q already (%s). A host belongs to one environment: its containers are that environment's floors. Remove it from one of the two.", h, owner[h].env.Name, owner[h].env.DeclRange))
				continue
			}
			seen[h] = true
			owner[h] = d
		}
		switch from := e.From; {
		case from == "":
		case from == e.Name:
			diags = append(diags, errorf(d.fromRange, "Environment promotes from itself", "Environment %q names itself in from. Write the environment builds come from before they reach %q (from = \"staging\"), or remove from.", e.Name, e.Name))
		case l.envs[from] == nil:
			diags = append(diags, errorf(d.fromRange, "Undefined environment", "Environment %q promotes from %q, but no environment block defines it. Add environment %q { hosts = [...] }, or fix the name.%s", e.Name, from, from, knownEnvironments(l.envOrder)))
		default:
			if cycle := fromCycle(l.envs, e.Name); cycle != nil {
				diags = append(diags, errorf(d.fromRange, "Cyclic promotion", "Environments promote from each other in a circle: %s. Builds must start somewhere: remove from in the environment they are first deployed to.", strings.Join(cycle, " ← ")))
			}
		}
	}
	for _, h := range l.c.Hosts {
		if owner[h.Name] == nil && l.hosts[h.Name] == h {
			diags = append(diags, errorf(h.DeclRange, "Host in no environment", "Host %q is in no environment, and this catalogue declares environments: its containers would be the floor of no lock. Add %q to the hosts of one environment (%s).", h.Name, h.Name, strings.Join(envNames(l.envOrder), ", ")))
		}
	}
	return diags
}

// fromCycle is the from chain from name back to name ("a", "b", "a"), or
// nil when following from from name ends, or loops elsewhere.
func fromCycle(envs map[string]*envDecl, name string) []string {
	chain := []string{name}
	for cur := name; ; {
		d := envs[cur]
		if d == nil || d.env.From == "" || d.env.From == cur {
			return nil
		}
		cur = d.env.From
		chain = append(chain, cur)
		if cur == name {
			return chain
		}
		if len(chain) > len(envs)+1 {
			return nil // a cycle that does not pass through name
		}
	}
}

func envNames(ds []*envDecl) []string {
	var n []string
	for _, d := range ds {
		n = append(n, d.env.Name)
	}
	sort.Strings(n)
	return n
}

func knownEnvironments(ds []*envDecl) string {
	return fmt.Sprintf(" Defined environments: %s.", strings.Join(envNames(ds), ", "))
}

// Environment returns the environment with the given name, or nil.
func (c *Catalogue) Environment(name string) *Environment {
	for _, e := range c.Environments {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// EnvironmentOf returns the environment host is in; nil when the
// catalogue declares no environments (or host is in none, which a loaded
// catalogue does not allow).
func (c *Catalogue) EnvironmentOf(host string) *Environment {
	for _, e := range c.Environments {
		if slices.Contains(e.Hosts, host) {
			return e
		}
	}
	return nil
}

// InEnvironment reports whether module m runs in environment e: its
// runs_on names one of e's hosts, or it names no host at all (a module
// that runs nowhere yet, or only where a pin.module label puts it, is
// locked in every environment).
func (m *Module) InEnvironment(e *Environment) bool {
	if len(m.RunsOn) == 0 {
		return true
	}
	return slices.ContainsFunc(m.RunsOn, func(ro RunsOn) bool { return slices.Contains(e.Hosts, ro.Host) })
}

// ForEnvironment is the catalogue as environment name sees it: its hosts
// only, and the modules that run there (InEnvironment, and those named in
// also: modules a pin.module label places on its hosts), each with its
// runs_on limited to its hosts, and e its one environment. Registries,
// the export block and the files are shared. Modules are copies; the catalogue is not changed. Nil
// when there is no such environment.
func (c *Catalogue) ForEnvironment(name string, also ...string) *Catalogue {
	e := c.Environment(name)
	if e == nil {
		return nil
	}
	out := &Catalogue{Registries: c.Registries, Export: c.Export, Files: c.Files, Environments: []*Environment{e}}
	for _, h := range c.Hosts {
		if slices.Contains(e.Hosts, h.Name) {
			out.Hosts = append(out.Hosts, h)
		}
	}
	for _, m := range c.Modules {
		if !m.InEnvironment(e) && !slices.Contains(also, m.Name) {
			continue
		}
		cp := *m
		cp.RunsOn = nil
		for _, ro := range m.RunsOn {
			if slices.Contains(e.Hosts, ro.Host) {
				cp.RunsOn = append(cp.RunsOn, ro)
			}
		}
		out.Modules = append(out.Modules, &cp)
	}
	return out
}
