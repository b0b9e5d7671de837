package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// action is the part of action.yml a composite Action's runner reads.
type action struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	Name             string            `yaml:"name"`
	Uses             string            `yaml:"uses"`
	If               string            `yaml:"if"`
	Shell            string            `yaml:"shell"`
	WorkingDirectory string            `yaml:"working-directory"`
	Env              map[string]string `yaml:"env"`
	Run              string            `yaml:"run"`
}

type stepResult struct {
	name   string
	ran    bool
	code   int
	output string
}

var expression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// runAction runs the run: steps of the repository's action.yml with bash,
// as GitHub's runner does for a composite Action (bash --noprofile --norc
// -eo pipefail, $GITHUB_PATH read between steps), in workspace, with
// inputs over the defaults. uses: steps (actions/setup-go) are the
// runner's business: Go is already here. Only the expressions action.yml
// uses are understood; any other fails the test.
func runAction(t *testing.T, workspace string, inputs map[string]string) []stepResult {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(src, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("action.yml runs using %q, want composite", a.Runs.Using)
	}
	in := map[string]string{}
	for k, v := range a.Inputs {
		in[k] = v.Default
	}
	for k, v := range inputs {
		if _, ok := a.Inputs[k]; !ok {
			t.Fatalf("action.yml has no input %q", k)
		}
		in[k] = v
	}
	value := func(expr string) string {
		switch {
		case strings.HasPrefix(expr, "inputs."):
			v, ok := in[strings.TrimPrefix(expr, "inputs.")]
			if !ok {
				t.Fatalf("action.yml: unknown input in %q", expr)
			}
			return v
		case expr == "github.action_path":
			return repoRoot
		}
		t.Fatalf("action.yml: expression %q is not understood by this test", expr)
		return ""
	}
	subst := func(s string) string {
		return expression.ReplaceAllStringFunc(s, func(m string) string { return value(expression.FindStringSubmatch(m)[1]) })
	}
	tmp := t.TempDir()
	pathFile := filepath.Join(tmp, "github_path")
	writeFile(t, pathFile, "")
	path := os.Getenv("PATH")
	failed := false
	var results []stepResult
	for i, st := range a.Runs.Steps {
		res := stepResult{name: st.Name}
		cond := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(st.If), "${{"), "}}"))
		// A condition without a status function holds only after
		// success(); "A && B" holds when both do.
		run, status := true, false
		for _, c := range strings.Split(cond, " && ") {
			switch c = strings.TrimSpace(c); {
			case c == "":
			case c == "success() || failure()" || c == "(success() || failure())":
				status = true
			case regexp.MustCompile(`^inputs\.[a-z-]+ == '[^']*'$`).MatchString(c):
				l, r, _ := strings.Cut(c, " == ")
				run = run && value(l) == strings.Trim(r, "'")
			default:
				t.Fatalf("step %d: condition %q is not understood by this test", i, st.If)
			}
		}
		run = run && (status || !failed)
		if st.Uses != "" || !run {
			results = append(results, res)
			continue
		}
		if st.Shell != "bash" {
			t.Fatalf("step %q: shell %q; composite run steps need shell: bash", st.Name, st.Shell)
		}
		script := filepath.Join(tmp, fmt.Sprintf("step-%d.sh", i))
		writeFile(t, script, subst(st.Run))
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir = workspace
		if wd := subst(st.WorkingDirectory); wd != "" {
			cmd.Dir = filepath.Join(workspace, wd)
		}
		cmd.Env = append(os.Environ(), "PATH="+path, "GITHUB_PATH="+pathFile, "GITHUB_WORKSPACE="+workspace, "RUNNER_TEMP="+tmp, "CI=true")
		for k, v := range st.Env {
			cmd.Env = append(cmd.Env, k+"="+subst(v))
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		res.ran, res.output = true, out.String()
		if ee, ok := err.(*exec.ExitError); ok {
			res.code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("step %q: %v", st.Name, err)
		}
		failed = failed || res.code != 0
		b, _ := os.ReadFile(pathFile)
		for _, dir := range strings.Fields(string(b)) {
			if !strings.Contains(path, dir+":") {
				path = dir + ":" + path
			}
		}
		results = append(results, res)
	}
	return results
}

// TestAction runs action.yml's steps on a temporary copy of the incident:
// pin is installed from the Action's checkout (this repository), then the
// lock check and the outdated annotations run, the second also after the
// first fails; inputs change what runs and what fails.
func TestAction(t *testing.T) {
	if testing.Short() {
		if os.Getenv("CI") != "" {
			t.Fatal("TestAction runs in CI: do not pass -short there")
		}
		t.Skip("installs pin with go install")
	}
	step := func(rs []stepResult, name string) stepResult {
		for _, r := range rs {
			if strings.Contains(r.name, name) {
				return r
			}
		}
		t.Fatalf("no step %q", name)
		return stepResult{}
	}

	// No lock yet: the check fails, outdated still runs and warns.
	dir := incidentDir(t, nil)
	rs := runAction(t, dir, nil)
	install := step(rs, "Install pin")
	if !install.ran || install.code != 0 || !strings.HasPrefix(strings.TrimSpace(install.output[strings.LastIndex(strings.TrimSpace(install.output), "\n")+1:]), "pin ") {
		t.Fatalf("install: exit %d\n%s", install.code, install.output)
	}
	check, outdated := step(rs, "lock is up to date"), step(rs, "runs newer")
	if check.code != 1 || !strings.Contains(check.output, "pin.lock.hcl would change") {
		t.Errorf("check without a lock: exit %d\n%s", check.code, check.output)
	}
	if !outdated.ran || outdated.code != 0 || !strings.Contains(outdated.output, "::warning file=catalogue.hcl,line=18,title=forge%3A unlocked::") {
		t.Errorf("outdated after a failed check: ran %v, exit %d\n%s", outdated.ran, outdated.code, outdated.output)
	}

	// Locked: both pass.
	if r := pin(t, dir, "resolve"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	rs = runAction(t, dir, nil)
	if c, o := step(rs, "lock is up to date"), step(rs, "runs newer"); c.code != 0 || o.code != 0 || !strings.Contains(o.output, "3 modules: 3 current.") {
		t.Errorf("locked: check exit %d, outdated exit %d\n%s%s", c.code, o.code, c.output, o.output)
	}

	// Inputs: a folder of its own, no check, and a --fail-on that fails.
	sub := filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(filepath.Join(sub, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	cat, _ := os.ReadFile(filepath.Join(dir, "catalogue.hcl"))
	writeFile(t, filepath.Join(sub, "deploy", "catalogue.hcl"), string(cat))
	rs = runAction(t, sub, map[string]string{"working-directory": "deploy", "check": "false", "fail-on": "unlocked"})
	if c := step(rs, "lock is up to date"); c.ran {
		t.Error("check: false still ran the check")
	}
	if o := step(rs, "runs newer"); o.code != 1 || !strings.Contains(o.output, "::error file=catalogue.hcl,line=18,title=forge%3A unlocked::") {
		t.Errorf("fail-on unlocked: exit %d\n%s", o.code, o.output)
	}
}

// TestCIExample: examples/ci/pin.yml runs the Action of this repository,
// with inputs it declares; TestAction runs the Action's steps.
func TestCIExample(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "examples/ci/pin.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(src, &wf); err != nil {
		t.Fatal(err)
	}
	var a action
	actionSrc, _ := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err := yaml.Unmarshal(actionSrc, &a); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			if !strings.HasPrefix(st.Uses, "pin-tool/pin@") {
				continue
			}
			found++
			for k := range st.With {
				if _, ok := a.Inputs[k]; !ok {
					t.Errorf("the example passes %q, which action.yml does not declare", k)
				}
			}
		}
	}
	if found != 1 {
		t.Errorf("the example uses the pin Action %d times, want once", found)
	}
}

// TestActionPropose runs action.yml's steps in propose mode on a clone of
// the incident whose origin is a bare repository: the checks do not run,
// pin propose pushes its branch, and a runner's git with no identity
// commits as the Actions bot.
func TestActionPropose(t *testing.T) {
	if testing.Short() {
		if os.Getenv("CI") != "" {
			t.Fatal("TestActionPropose runs in CI: do not pass -short there")
		}
		t.Skip("installs pin with go install")
	}
	gitUser(t)
	remote := localRemote(t)
	clone := seedIncident(t, remote, nil)
	// The runner's git: no identity.
	bare := filepath.Join(t.TempDir(), "gitconfig")
	writeFile(t, bare, "[init]\n\tdefaultBranch = main\n")
	t.Setenv("GIT_CONFIG_GLOBAL", bare)
	t.Setenv("EMAIL", "")
	rs := runAction(t, clone, map[string]string{"mode": "propose", "forge": "none", "propose-args": "--export-compose compose.yaml"})
	for _, r := range rs {
		switch {
		case strings.Contains(r.name, "Propose"):
			if !r.ran || r.code != 0 || !strings.Contains(r.output, "pushed   refs/heads/pin/update ([new branch])") {
				t.Errorf("propose: ran %v, exit %d\n%s", r.ran, r.code, r.output)
			}
		case strings.Contains(r.name, "lock is up to date"), strings.Contains(r.name, "runs newer"):
			if r.ran {
				t.Errorf("%q ran in propose mode", r.name)
			}
		}
	}
	author := gitIn(t, remote, "log", "-1", "--format=%an <%ae>|%s", "pin/update")
	if author != "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>|pin: update analytics, forge and packages" {
		t.Errorf("the commit: %s", author)
	}
	if files := gitIn(t, remote, "diff", "--name-only", "main", "pin/update"); files != "compose.pin.yaml\npin.lock.hcl" {
		t.Errorf("the commit changes %q", files)
	}
}

// TestCIProposeExample: examples/ci/propose.yml runs the Action in propose
// mode on a weekly schedule, with inputs action.yml declares and the
// permissions a pull request needs.
func TestCIProposeExample(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "examples/ci/propose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On struct {
			Schedule []struct {
				Cron string `yaml:"cron"`
			} `yaml:"schedule"`
		} `yaml:"on"`
		Permissions map[string]string `yaml:"permissions"`
		Jobs        map[string]struct {
			Steps []struct {
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(src, &wf); err != nil {
		t.Fatal(err)
	}
	var a action
	actionSrc, _ := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err := yaml.Unmarshal(actionSrc, &a); err != nil {
		t.Fatal(err)
	}
	if len(wf.On.Schedule) != 1 || len(strings.Fields(wf.On.Schedule[0].Cron)) != 5 || strings.Fields(wf.On.Schedule[0].Cron)[4] == "*" {
		t.Errorf("schedule %+v: want one weekly cron", wf.On.Schedule)
	}
	if wf.Permissions["contents"] != "write" || wf.Permissions["pull-requests"] != "write" {
		t.Errorf("permissions %v", wf.Permissions)
	}
	found := 0
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			if !strings.HasPrefix(st.Uses, "pin-tool/pin@") {
				continue
			}
			found++
			if st.With["mode"] != "propose" {
				t.Errorf("mode %q", st.With["mode"])
			}
			for k := range st.With {
				if _, ok := a.Inputs[k]; !ok {
					t.Errorf("the example passes %q, which action.yml does not declare", k)
				}
			}
		}
	}
	if found != 1 {
		t.Errorf("the example uses the pin Action %d times, want once", found)
	}
}
