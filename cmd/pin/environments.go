package main

import (
	"errors"
	"fmt"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/resolve"
)

// environments splits the inputs of a run that writes no lock by
// environment (source's Inputs.Select): those named, or with host set (a
// command about one host) the host's, or all. A catalogue without
// environments is one, named "", whose lock is --lock.
func environments(in *source.Inputs, g *globalOptions, s streams, names []string, host string) ([]*source.Env, error) {
	run, err := in.Select(source.Selection{Lock: g.Lock, Environments: names, Host: host, ReadOnly: true, Now: g.now()})
	if err != nil {
		return nil, selectError(s, err)
	}
	warnOrphans(s, run.Orphans)
	seededNotes(s, run.Envs)
	return run.Envs, nil
}

// selectError maps an error of choosing a run's environments and modules
// to its exit code: 2 for what the command line or a lock file got wrong.
func selectError(s streams, err error) error {
	var ue *source.UnknownEnvironmentError
	var um *source.UnknownModulesError
	var he *source.HostEnvironmentError
	var ne *source.NotInEnvironmentsError
	if errors.As(err, &ue) || errors.As(err, &um) || errors.As(err, &he) || errors.As(err, &ne) {
		return withCode(exitInput, err)
	}
	return loadError(s, nil, nil, err)
}

// seededNotes says of each environment whose lock does not exist yet
// where its previous entries come from.
func seededNotes(s streams, envs []*source.Env) {
	for _, e := range envs {
		if e.Seeded != "" {
			fmt.Fprintf(s.Err, "pin: environment %s has no lock yet (%s): its previous entries are those of %s, the lock before environments were declared\n", sanitize(e.Name), sanitize(e.Path), sanitize(e.Seeded))
		}
	}
}

// warnOrphans says, for a command that writes no lock, that the lock
// of an environment no longer declared is beside the lock (orphans, nil
// when none is): pin resolve refuses until it is declared again or
// moved away.
func warnOrphans(s streams, orphans *source.OrphanError) {
	if orphans == nil {
		return
	}
	for _, p := range orphans.Locks {
		fmt.Fprintf(s.Err, "pin: warning: %s is the lock of an environment the catalogue no longer declares: what it recorded on a host still bounds that host, and pin resolve refuses to write until the environment is declared again or the file moved away\n", sanitize(p))
	}
}

// envPrefix is "environment NAME: ", or "" without environments.
func envPrefix(env *source.Env) string {
	if env.Name == "" {
		return ""
	}
	return fmt.Sprintf("environment %s: ", env.Name)
}

// lockPaths names the lock files of envs: "pin.lock.hcl", or
// "pin.lock.production.hcl and pin.lock.staging.hcl".
func lockPaths(envs []*source.Env) string {
	var n []string
	for _, e := range envs {
		n = append(n, e.Path)
	}
	return joinAnd(n)
}

// envOutput is one environment's lock in a plan.
type envOutput struct {
	Name    string `json:"name"`
	Lock    string `json:"lock"`
	Changed bool   `json:"changed"`
	Written bool   `json:"written"`
	// Seeded is the lock the previous entries were read from when the
	// environment's own did not exist yet.
	Seeded string `json:"seeded_from,omitempty"`
}

// mergeEnvironments is one plan of the environments' plans: without
// environments, the one plan as it always was; with them, every module
// with its environment, and each environment's lock.
func mergeEnvironments(reports []planOutput, envs []*source.Env, g *globalOptions) planOutput {
	if len(envs) == 1 && envs[0].Name == "" && len(reports) == 1 {
		return reports[0]
	}
	out := planOutput{Schema: JSONSchema, Catalogue: g.Catalogue, Lock: g.Lock, Modules: []moduleOutput{}, Environments: []envOutput{}}
	for _, r := range reports {
		out.Command = r.Command
	}
	for i, r := range reports {
		var env *source.Env
		for _, e := range envs {
			if e.Path == r.Lock {
				env = e
			}
		}
		name := ""
		if env != nil {
			name = env.Name
			out.Environments = append(out.Environments, envOutput{Name: name, Lock: r.Lock, Changed: r.Changed, Written: r.Written, Seeded: env.Seeded})
		}
		out.Changed = out.Changed || r.Changed
		out.Written = out.Written || r.Written
		for _, m := range reports[i].Modules {
			m.Environment = name
			out.Modules = append(out.Modules, m)
		}
	}
	return out
}

// envPlans splits a plan with environments into one per environment, for
// the table.
func envPlans(out planOutput) []planOutput {
	var plans []planOutput
	for _, e := range out.Environments {
		p := planOutput{Schema: out.Schema, Command: out.Command, Catalogue: out.Catalogue, Lock: e.Lock, Changed: e.Changed, Written: e.Written, Environment: e.Name}
		for _, m := range out.Modules {
			if m.Environment == e.Name {
				p.Modules = append(p.Modules, m)
			}
		}
		plans = append(plans, p)
	}
	return plans
}

// envHeader is the line above an environment's plan.
func envHeader(name, lockPath string) string {
	return fmt.Sprintf("Environment %s (%s):\n\n", name, lockPath)
}

// leftEnvironment rewords the retired entries of modules still in the
// catalogue but no longer in env (their runs_on moved to another
// environment's hosts): they left the environment, not the catalogue,
// and their entry stays a floor in env's lock.
func leftEnvironment(out *planOutput, env *source.Env, cat *catalogue.Catalogue) {
	if env.Name == "" {
		return
	}
	for i, m := range out.Modules {
		if (m.Change == string(resolve.ChangeRetire) || m.Change == string(resolve.ChangeRetired)) && cat.Module(m.Name) != nil {
			out.Modules[i].Why = fmt.Sprintf("module %q no longer runs in environment %s: its entry stays in %s (retired %q), a floor of this environment for the module that takes over what it ran here, until one does; moving a module between environments frees no floor", m.Name, env.Name, env.Path, m.Name)
		}
	}
}

// lockRefusal is the refusal of a run that writes one environment's lock
// (SelectTarget): an orphan lock beside it, or a host its lock recorded
// that is another environment's now, each with exit code 2; nil when
// neither.
func lockRefusal(run *source.Run) error {
	switch {
	case run.Orphans != nil:
		return withCode(exitInput, run.Orphans)
	case run.Moved != nil:
		return withCode(exitInput, run.Moved)
	}
	return nil
}
