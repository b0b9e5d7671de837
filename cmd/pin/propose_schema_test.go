package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pin-tool/pin/internal/export"
)

// proposeSchema compiles docs/schema/propose.schema.json, formats
// asserted.
func proposeSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	r, err := os.Open(filepath.Join(repoRoot, "docs/schema/propose.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	doc, err := jsonschema.UnmarshalJSON(r)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := doc.(map[string]any)["$id"].(string)
	if !strings.HasSuffix(id, "/docs/schema/propose.schema.json") {
		t.Fatalf("$id %q does not name the file", id)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// localRemote is a bare repository in a folder: real git, no server.
func localRemote(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	gitIn(t, filepath.Dir(dir), "init", "--quiet", "--bare", "--initial-branch=main", dir)
	return dir
}

// TestProposeJSONSchema validates pin propose --format json in states that
// fill every part of it: a pushed proposal with exports, a refused module
// and a removed one; the same result again; no change; a dry run split
// per module. The schema is strict enough to fail on drift.
func TestProposeJSONSchema(t *testing.T) {
	gitUser(t)
	schema := proposeSchema(t)
	remote := localRemote(t)
	seed := seedIncident(t, remote, nil)
	// forge refused (exact below what runs), and a module gone from the
	// catalogue whose entry the proposal removes.
	editFile(t, filepath.Join(seed, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, "policy  = \"at-least-running\"\n  pin     = \"1.22.6@", "policy  = \"exact\"\n  pin     = \"1.22.6@", 1)
	})
	editFile(t, filepath.Join(seed, "pin.lock.hcl"), func(s string) string {
		// gone names packages' repository on its host: packages takes it
		// over. old names a repository no module has: it is retired.
		old := strings.Replace(block(s, "packages"), `module "packages"`, `module "old"`, 1)
		old = strings.Replace(old, `"registry.example.org/packages/registry"`, `"registry.example.org/packages/legacy"`, 1)
		return s + strings.Replace(block(s, "packages"), `module "packages"`, `module "gone"`, 1) + old
	})
	// The override as exported from the old lock (with pin's header: pin
	// wrote it); and packages' image in compose.yaml names 6.10.3's digest
	// under the tag 6.10.1 (a finding; the image is the new entry's, so
	// writing the entry there names no older image).
	writeFile(t, filepath.Join(seed, "compose.pin.yaml"), export.OverrideHeader+"services:\n  forgejo:\n    image: registry.example.org/forge/forgejo:1.22.6@sha256:e8cb3b3125e6749cf5699a687da1e55dfd6a6e90d2343da333ae789259110665\n")
	editFile(t, filepath.Join(seed, "compose.yaml"), func(s string) string {
		return strings.Replace(s, "registry:6.10.1", "registry:6.10.1@sha256:de6ae79ec9765043b6d01bf958166a0b587b43d5d185872aed921f9cd09bc5e8", 1)
	})
	gitIn(t, seed, "add", "-A")
	gitIn(t, seed, "commit", "--quiet", "-m", "forge exact, a module gone")
	gitIn(t, seed, "push", "--quiet", "origin", "HEAD:main")

	run := func(what string, args ...string) proposeOutput {
		t.Helper()
		r := pin(t, seed, append([]string{"propose", "--format", "json"}, args...)...)
		if r.code > 1 || r.stdout == "" {
			t.Fatalf("%s: exit %d\n%s", what, r.code, r.stderr)
		}
		validate(t, schema, what, r.stdout)
		var out proposeOutput
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := run("pushed", "--export-compose", "compose.yaml")
	if len(out.Refused) != 1 || len(out.Proposals) != 1 || out.Proposals[0].Outcome != "pushed" || len(out.Proposals[0].Findings) != 1 {
		t.Fatalf("pushed: %+v", out)
	}
	verdicts, takes := map[string]string{}, map[string][]string{}
	for _, m := range out.Proposals[0].Modules {
		verdicts[m.Name] = m.Verdict
		takes[m.Name] = m.TakesOver
	}
	if verdicts["old"] != "retire" || verdicts["packages"] != "held" || verdicts["gone"] != "" {
		t.Errorf("verdicts %v", verdicts)
	}
	if !slices.Equal(takes["packages"], []string{"gone"}) {
		t.Errorf("packages takes over %q, want gone", takes["packages"])
	}
	run("up to date", "--export-compose", "compose.yaml")
	run("split, dry run", "--split", "module", "--dry-run")

	// The schema fails on drift.
	good := pin(t, seed, "propose", "--format", "json", "--dry-run").stdout
	for what, bad := range map[string]string{
		"an unknown field":   strings.Replace(good, `"outcome":`, `"surprise": 1, "outcome":`, 1),
		"an unknown verdict": strings.Replace(good, `"verdict": "held"`, `"verdict": "downgrade"`, 1),
		"a missing field":    strings.Replace(good, `"base_commit":`, `"base_comit":`, 1),
		"a bad digest":       strings.Replace(good, `"lock": "sha256:`, `"lock": "sha256:zz`, 1),
	} {
		if bad == good {
			t.Fatalf("%s: the edit did not apply", what)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if schema.Validate(inst) == nil {
			t.Errorf("%s passes the schema", what)
		}
	}
}
