package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The JSON Schema documents of docs/schema, one per --format json output.
// github.com/santhosh-tekuri/jsonschema/v6 is imported by this test only:
// go.mod lists it as a requirement, but pin's binary does not link it.
var schemaFiles = []string{"plan.schema.json", "cutover.schema.json", "outdated.schema.json", "init.schema.json", "export.schema.json", "status.schema.json", "promote.schema.json", "version.schema.json"}

// compileSchemas compiles the documents, each known by its $id, with
// formats (date-time) asserted.
func compileSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	ids := map[string]string{}
	for _, f := range schemaFiles {
		r, err := os.Open(filepath.Join(repoRoot, "docs/schema", f))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(r)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		id, _ := doc.(map[string]any)["$id"].(string)
		if !strings.HasSuffix(id, "/docs/schema/"+f) {
			t.Fatalf("%s: $id %q does not name the file", f, id)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		ids[f] = id
	}
	out := map[string]*jsonschema.Schema{}
	for _, f := range schemaFiles {
		s, err := c.Compile(ids[f])
		if err != nil {
			t.Fatalf("compiling %s: %v", f, err)
		}
		out[f] = s
	}
	return out
}

func validate(t *testing.T, s *jsonschema.Schema, what, out string) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, out)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("%s does not match its schema: %v\n%s", what, err, out)
	}
}

// TestJSONSchemas runs the CLI in-process on the incident and on the
// outdated fleet, in states that fill every optional part of each output
// (refusals, errors, removed modules, unlocked containers, every status),
// and validates each output against its schema.
func TestJSONSchemas(t *testing.T) {
	schemas := compileSchemas(t)
	plan, cutover, outdated := schemas["plan.schema.json"], schemas["cutover.schema.json"], schemas["outdated.schema.json"]

	// A fresh incident: plan of adds; the cutover before any lock (unlocked).
	dir := incidentLocked(t)
	fresh := incidentDir(t, nil)
	validate(t, cutover, "plan mesh-1, nothing locked", pin(t, fresh, "plan", "mesh-1", "--format", "json").stdout)
	validate(t, plan, "resolve, nothing locked", pin(t, fresh, "resolve", "--format", "json").stdout)
	validate(t, plan, "resolve, locked", pin(t, dir, "resolve", "--format", "json").stdout)
	validate(t, plan, "lock --from-host", pin(t, dir, "lock", "--from-host", "mesh-1", "--format", "json").stdout)
	validate(t, cutover, "plan mesh-1", pin(t, dir, "plan", "mesh-1", "--format", "json").stdout)
	validate(t, outdated, "outdated, incident", pin(t, dir, "outdated", "--format", "json").stdout)

	// A refusal and a removed module.
	editFile(t, filepath.Join(dir, "pin.lock.hcl"), func(s string) string {
		return s + strings.Replace(block(s, "forge"), `module "forge"`, `module "gone"`, 1)
	})
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `policy  = "at-least-running"
  pin     = "1.22.6@`, `policy  = "exact"
  pin     = "1.22.6@`, 1)
	})
	r := pin(t, dir, "resolve", "--format", "json")
	var p planOutput
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || r.code != 1 {
		t.Fatalf("refused resolve: exit %d, %v", r.code, err)
	}
	changes := map[string]string{}
	for _, m := range p.Modules {
		changes[m.Name] = m.Change
	}
	if changes["forge"] != "refused" || changes["gone"] != "retire" {
		t.Fatalf("changes %v, want forge refused and gone retired", changes)
	}
	validate(t, plan, "resolve, refused", r.stdout)
	// The same without the refusal: forge takes over gone, which recorded
	// forge's container.
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `policy  = "exact"`, `policy  = "at-least-running"`, 1)
	})
	r = pin(t, dir, "resolve", "--format", "json", "--check")
	if !strings.Contains(r.stdout, `"taken_over"`) || !strings.Contains(r.stdout, `"change": "taken-over"`) {
		t.Fatalf("forge does not take gone over: exit %d\n%s", r.code, r.stdout)
	}
	validate(t, plan, "resolve, taken over", r.stdout)
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `policy  = "at-least-running"
  pin     = "1.22.6@`, `policy  = "exact"
  pin     = "1.22.6@`, 1)
	})
	validate(t, outdated, "outdated, regression", pin(t, dir, "outdated", "--format", "json").stdout)

	// A lock entry that disagrees with its content: an error.
	editFile(t, filepath.Join(dir, "pin.lock.hcl"), func(s string) string {
		return strings.Replace(s, `version = "1.27.3"`, `version = "1.28.0"`, 1)
	})
	r = pin(t, dir, "resolve", "--format", "json")
	if r.code != 2 || !strings.Contains(r.stdout, `"change": "error"`) {
		t.Fatalf("resolve with a lying lock: exit %d\n%s", r.code, r.stdout)
	}
	validate(t, plan, "resolve, error", r.stdout)

	// The outdated fleet: every status.
	fleet := pin(t, fleetDir(t), "outdated", "--format", "json")
	for _, st := range []string{"behind-running", "unknown-order", "skew", "error", "unlocked", "behind-upstream", "current"} {
		if !strings.Contains(fleet.stdout, `"`+st+`"`) {
			t.Errorf("the fleet has no %s: the schema test does not see it", st)
		}
	}
	validate(t, outdated, "outdated fleet", fleet.stdout)
	validate(t, outdated, "outdated golden", string(mustRead(t, filepath.Join("testdata", "outdated.fleet.json"))))
	validate(t, plan, "resolve golden", string(mustRead(t, filepath.Join("testdata", "incident.plan.json"))))
}

// TestJSONSchemasCatchDrift: the schemas are strict enough to fail on an
// output that drifted: a field they do not know, a status they do not
// list, a missing field.
func TestJSONSchemasCatchDrift(t *testing.T) {
	schemas := compileSchemas(t)
	good := string(mustRead(t, filepath.Join("testdata", "outdated.fleet.json")))
	for what, bad := range map[string]string{
		"an unknown field":  strings.Replace(good, `"failed":`, `"surprise": 1, "failed":`, 1),
		"an unknown status": strings.Replace(good, `"behind-upstream"`, `"behind-upstreem"`, 1),
		"a missing field":   strings.Replace(good, `"fail_on":`, `"fail_off":`, 1),
		"a bad date":        strings.Replace(good, `"created": "2026-`, `"created": "yesterday-`, 1),
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if bad == good {
			t.Fatalf("%s: the edit did not apply", what)
		}
		if schemas["outdated.schema.json"].Validate(inst) == nil {
			t.Errorf("%s passes the outdated schema", what)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
