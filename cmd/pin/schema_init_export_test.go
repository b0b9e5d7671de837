package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pin-tool/pin/internal/host"
)

// TestInitExportJSONSchemas validates pin init --format json and pin
// export --format json, in states that fill every part of each: modules
// added from a Compose file, manifests and a host (every runs_on form, a
// pin and none), things skipped, nothing written; export's override,
// in-place files, an env file, --check, references it cannot write and a
// reference whose tag and digest disagree with the lock.
func TestInitExportJSONSchemas(t *testing.T) {
	schemas := compileSchemas(t)
	initSchema, exportSchema := schemas["init.schema.json"], schemas["export.schema.json"]
	seen := map[string]bool{}
	check := func(s *jsonschema.Schema, what string, r result, code int) {
		t.Helper()
		if r.code != code {
			t.Fatalf("%s: exit %d, want %d\n%s%s", what, r.code, code, r.stdout, r.stderr)
		}
		validate(t, s, what, r.stdout)
		var fields map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &fields); err != nil {
			t.Fatal(err)
		}
		collect(fields, seen)
	}

	// init: a host running a container no module takes over.
	dir := t.TempDir()
	snap := host.Snapshot{Schema: 1, Host: "h1", ImageStore: "classic",
		Containers: []host.Container{{ID: strings.Repeat("1", 64), Name: "cache", Image: "registry.example.org/pin/cache:7", ImageID: digWeb, State: "running"}},
		Images:     []host.Image{{ID: digWeb, RepoDigests: []string{"registry.example.org/pin/cache@" + digForge}}}}
	b, err := snap.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"h1.json":        string(b),
		"catalogue.hcl":  "host \"h1\" {\n  snapshot = \"h1.json\"\n}\n",
		"compose.yaml":   "name: stack\nservices:\n  web:\n    image: registry.example.org/pin/web:1.1\n  assets:\n    build: ./assets\n",
		"k8s/forge.yaml": manifests,
	})
	check(initSchema, "init --compose --host", pin(t, dir, "init", "--compose", "compose.yaml", "--host", "h1", "--format", "json"), exitOK)
	check(initSchema, "init --manifests --host", pin(t, dir, "init", "--manifests", "k8s", "--host", "h1", "--format", "json"), exitOK)
	check(initSchema, "init --from-host", pin(t, dir, "init", "--from-host", "h1", "--format", "json"), exitOK)
	check(initSchema, "init again, nothing to add", pin(t, dir, "init", "--compose", "compose.yaml", "--host", "h1", "--format", "json"), exitOK)
	other := t.TempDir()
	writeFiles(t, other, map[string]string{"compose.yaml": "services:\n  db:\n    image: registry.example.org/pin/db:2.0@" + digForge + "\n"})
	check(initSchema, "init --compose, no host", pin(t, other, "init", "--compose", "compose.yaml", "--format", "json"), exitOK)
	writeFiles(t, other, map[string]string{
		"up.yaml":      "services:\n  shell:\n    image: ubuntu\n",
		"k8s/rs.yaml":  "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec:\n  template:\n    spec:\n      containers: [{name: a, image: reg.example/a:1}]\n",
		"k8s/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: b, image: reg.example/b:1}]\n",
	})
	check(initSchema, "init --compose --policy track-upstream, a floating tag", pin(t, other, "init", "--compose", "up.yaml", "--policy", "track-upstream", "--format", "json"), exitOK)
	check(initSchema, "init --manifests, a kind left out", pin(t, other, "init", "--manifests", "k8s", "--format", "json"), exitFindings)

	// export: an override, in place, an env file, and --check.
	dir = t.TempDir()
	exportFixture(t, dir, map[string]string{
		"compose.yaml": "services:\n  web:\n    image: registry.example.org/pin/web:1.1\n  db:\n    image: registry.example.org/pin/db:1.9@" + digForge + "\n  other:\n    image: registry.example.org/else/x:1\n",
		"deploy.env":   "WEB_IMAGE=registry.example.org/pin/web:1.1\n",
	})
	check(exportSchema, "export --compose", pin(t, dir, "export", "--compose", "compose.yaml", "--offline", "--format", "json"), exitOK)
	check(exportSchema, "export --in-place --check", pin(t, dir, "export", "--compose", "compose.yaml", "--in-place", "--offline", "--check", "--format", "json"), exitFindings)
	check(exportSchema, "export --env", pin(t, dir, "export", "--env", "deploy.env", "--offline", "--format", "json"), exitOK)
	writeFile(t, filepath.Join(dir, "compose.yaml"), "x-web: &web registry.example.org/pin/web:1.1\nservices:\n  web:\n    image: *web\n")
	check(exportSchema, "export --in-place, an alias", pin(t, dir, "export", "--compose", "compose.yaml", "--in-place", "--offline", "--format", "json"), exitFindings)
	writeFile(t, filepath.Join(dir, "deploy.env"), "WEB_IMAGE=registry.example.org/pin/web:9.9\n")
	check(exportSchema, "export --env, a newer image refused", pin(t, dir, "export", "--env", "deploy.env", "--offline", "--format", "json"), exitFindings)

	// Every field of both schemas was seen in an output.
	for _, s := range []string{"init.schema.json", "export.schema.json"} {
		var doc map[string]any
		if err := json.Unmarshal(mustRead(t, filepath.Join(repoRoot, "docs/schema", s)), &doc); err != nil {
			t.Fatal(err)
		}
		fields := map[string]bool{}
		collect(doc["properties"], fields)
		for f := range fields {
			if !seen[f] {
				t.Errorf("%s: no output had %s", s, f)
			}
		}
	}
}

// collect records the object keys of v (a decoded JSON value), at any
// depth, in seen: an output's fields, or (keywords left out) the
// properties a schema names.
func collect(v any, seen map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if k != "properties" && k != "items" && k != "description" && k != "type" && k != "required" && k != "additionalProperties" && k != "pattern" && k != "minLength" && k != "enum" && k != "const" && k != "dependentRequired" {
				seen[k] = true
			}
			collect(c, seen)
		}
	case []any:
		for _, c := range x {
			collect(c, seen)
		}
	}
}

// TestInitExportJSONSchemasCatchDrift: the schemas fail on an output that
// drifted: a field they do not know, a missing one, a wrong type.
func TestInitExportJSONSchemasCatchDrift(t *testing.T) {
	schemas := compileSchemas(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"compose.yaml": "services:\n  web:\n    image: registry.example.org/pin/web:1.1\n"})
	initOut := pin(t, dir, "init", "--compose", "compose.yaml", "--format", "json").stdout
	exportFixture(t, dir, map[string]string{"compose.yaml": "services:\n  web:\n    image: registry.example.org/pin/web:1.1\n"})
	exportOut := pin(t, dir, "export", "--compose", "compose.yaml", "--offline", "--format", "json").stdout
	for _, c := range []struct{ schema, what, good, bad string }{
		{"init.schema.json", "an unknown field", initOut, strings.Replace(initOut, `"written":`, `"surprise": 1, "written":`, 1)},
		{"init.schema.json", "an unknown field of a module", initOut, strings.Replace(initOut, `"module":`, `"runs": "h1", "module":`, 1)},
		{"init.schema.json", "a missing field", initOut, strings.Replace(initOut, `"from":`, `"frm":`, 1)},
		{"init.schema.json", "an unknown policy", initOut, strings.Replace(initOut, `"at-least-running"`, `"at-least-runing"`, 1)},
		{"export.schema.json", "an unknown field", exportOut, strings.Replace(exportOut, `"check":`, `"surprise": 1, "check":`, 1)},
		{"export.schema.json", "a missing field", exportOut, strings.Replace(exportOut, `"changed":`, `"chnged":`, 1)},
		{"export.schema.json", "a reference that is no digest", exportOut, strings.Replace(exportOut, `@sha256:1111`, `@sha256:zzzz`, 1)},
		{"export.schema.json", "a wrong type", exportOut, strings.Replace(exportOut, `"written": true`, `"written": "yes"`, 1)},
	} {
		if c.bad == c.good {
			t.Fatalf("%s: the edit did not apply to\n%s", c.what, c.good)
		}
		validate(t, schemas[c.schema], c.schema+", as written", c.good)
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(c.bad))
		if err != nil {
			t.Fatal(err)
		}
		if schemas[c.schema].Validate(inst) == nil {
			t.Errorf("%s passes %s", c.what, c.schema)
		}
	}
}
