package catalogue

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestEnvironments: environment blocks load sorted by name, with their
// hosts, from and soak; a host's environment and a module's are found;
// and an environment's lock file in the catalogue folder is not read as a
// catalogue file (it does not parse as one).
func TestEnvironments(t *testing.T) {
	c, diags := Load("testdata/environments")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var names []string
	for _, e := range c.Environments {
		names = append(names, e.Name)
	}
	if diff := cmp.Diff([]string{"production", "staging"}, names); diff != "" {
		t.Fatalf("environments (-want +got):\n%s", diff)
	}
	prod, staging := c.Environment("production"), c.Environment("staging")
	if prod.From != "staging" || prod.Soak != 24*time.Hour || staging.From != "" || staging.Soak != 0 {
		t.Errorf("production = %+v, staging = %+v", prod, staging)
	}
	if diff := cmp.Diff([]string{"s2", "s1"}, staging.Hosts); diff != "" {
		t.Errorf("staging hosts, as written (-want +got):\n%s", diff)
	}
	if c.Environment("dev") != nil {
		t.Error("Environment(dev) is not nil")
	}
	for host, want := range map[string]string{"s1": "staging", "s2": "staging", "p1": "production"} {
		if e := c.EnvironmentOf(host); e == nil || e.Name != want {
			t.Errorf("EnvironmentOf(%s) = %+v, want %s", host, e, want)
		}
	}
	if e := c.EnvironmentOf("nowhere"); e != nil {
		t.Errorf("EnvironmentOf(nowhere) = %+v", e)
	}

	view := func(env string, also ...string) map[string][]string {
		v := c.ForEnvironment(env, also...)
		out := map[string][]string{}
		for _, h := range v.Hosts {
			out["hosts"] = append(out["hosts"], h.Name)
		}
		for _, m := range v.Modules {
			var on []string
			for _, ro := range m.RunsOn {
				on = append(on, ro.Host)
			}
			out[m.Name] = append([]string{"runs_on"}, on...)
		}
		if len(v.Environments) != 1 || v.Environments[0].Name != env {
			t.Errorf("ForEnvironment(%s).Environments = %v", env, v.Environments)
		}
		return out
	}
	// api runs in both, canary in staging only; labelled names no host:
	// it is in every environment.
	if diff := cmp.Diff(map[string][]string{
		"hosts": {"p1"}, "api": {"runs_on", "p1"}, "labelled": {"runs_on"},
	}, view("production")); diff != "" {
		t.Errorf("production's view (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]string{
		"hosts": {"s1", "s2"}, "api": {"runs_on", "s1"}, "canary": {"runs_on", "s2"}, "labelled": {"runs_on"},
	}, view("staging")); diff != "" {
		t.Errorf("staging's view (-want +got):\n%s", diff)
	}
	// A pin.module label on a production host puts canary there too.
	if diff := cmp.Diff(map[string][]string{
		"hosts": {"p1"}, "api": {"runs_on", "p1"}, "canary": {"runs_on"}, "labelled": {"runs_on"},
	}, view("production", "canary")); diff != "" {
		t.Errorf("production's view with canary labelled there (-want +got):\n%s", diff)
	}
	// The view copies modules: the catalogue's keep their runs_on.
	if got := len(c.Module("api").RunsOn); got != 2 {
		t.Errorf("api's runs_on changed by a view: %d entries", got)
	}
	if c.ForEnvironment("dev") != nil {
		t.Error("ForEnvironment(dev) is not nil")
	}
}

// TestNoEnvironments: a catalogue without environment blocks has none,
// and every host is in none.
func TestNoEnvironments(t *testing.T) {
	c, diags := Load("testdata/good")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if len(c.Environments) != 0 || c.EnvironmentOf("mesh-1") != nil {
		t.Errorf("environments %v", c.Environments)
	}
}

// TestEnvironmentDiagnostics: the diagnostics say where (file, line,
// column of the value at fault) and what to write instead.
func TestEnvironmentDiagnostics(t *testing.T) {
	src, err := os.ReadFile("testdata/bad/environments.hcl")
	if err != nil {
		t.Fatal(err)
	}
	_, diags := Parse(Source{Filename: "env.hcl", Bytes: src})
	got := map[string]string{}
	for _, d := range diags {
		key := d.Summary
		if _, dup := got[key]; dup {
			continue // the first of each: the table below names those
		}
		got[key] = strings.Join([]string{d.Subject.String(), d.Detail}, " ")
	}
	for summary, want := range map[string]string{
		"Host in two environments":         `env.hcl:21,18-22 Host "s2" is in environment "staging" already (env.hcl:16,1-22). A host belongs to one environment: its containers are that environment's floors. Remove it from one of the two.`,
		"Host in no environment":           `env.hcl:12,1-12 Host "lost" is in no environment, and this catalogue declares environments: its containers would be the floor of no lock. Add "lost" to the hosts of one environment (Prod.EU, a, b, c, dev, e, f, production, qa, staging).`,
		"Undefined host":                   `env.hcl:31,12-21 Environment "qa" names host "nowhere", but no host block defines it. Add host "nowhere" { … }, or fix the name. Defined hosts: lost, p1, s1, s2.`,
		"Environment promotes from itself": `env.hcl:32,11-15 Environment "qa" names itself in from. Write the environment builds come from before they reach "qa" (from = "staging"), or remove from.`,
		"Undefined environment":            `env.hcl:37,11-20 Environment "dev" promotes from "sandbox", but no environment block defines it. Add environment "sandbox" { hosts = [...] }, or fix the name. Defined environments: Prod.EU, a, b, c, dev, e, f, production, qa, staging.`,
		"Cyclic promotion":                 `env.hcl:43,11-14 Environments promote from each other in a circle: a ← b ← a. Builds must start somewhere: remove from in the environment they are first deployed to.`,
		"Invalid soak":                     `env.hcl:23,11-18 soak of environment "production" is "a day": write a positive duration, such as "24h" or "90m" (how long a build must have run on every host of "staging" before it is promoted here).`,
		"soak without from":                `env.hcl:53,3-16 Environment "c" promotes from no environment, so there is nothing to soak in. Write from = "staging" (the environment builds come from), or remove soak.`,
		"Invalid environment name":         `env.hcl:56,13-22 "Prod.EU" cannot name an environment: its lock file is pin.lock.<name>.hcl. Use lower-case letters, digits, '_' and '-', at most 63, starting with a letter or digit, such as "staging".`,
		"Duplicate environment":            `env.hcl:26,13-25 An environment named "production" is already defined at env.hcl:20,1-25. Give each environment a unique name, or merge the two blocks.`,
		"Duplicate host in environment":    `env.hcl:17,24-28 Environment "staging" names host "s1" twice. Keep one.`,
	} {
		if diff := cmp.Diff(want, got[summary]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", summary, diff)
		}
	}
}
