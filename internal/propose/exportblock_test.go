package propose

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const deployCompose = "services:\n  forgejo:\n    image: registry.example.org/forge/forgejo:1.22.6\n  packages:\n    image: registry.example.org/packages/registry:6.10.1\n"

// forge127 is forge's new entry, as the exports write it.
const forge127 = "registry.example.org/forge/forgejo:1.27.3@sha256:fe63af8ae93decbf99e452febf938935c4a9782c1cf78c9f43311b3afdc7b6e3"

// withExportBlock commits to main the catalogue with block appended,
// and files; the user's checkout is not updated: pin proposes what the
// base holds.
func (f *fixture) withExportBlock(block string, files map[string]string) {
	f.t.Helper()
	if files == nil {
		files = map[string]string{}
	}
	files["catalogue.hcl"] = f.show("main", "catalogue.hcl") + block
	f.commitToMain(files)
}

// TestProposeExportBlock: with no --export-* flag, the exports the
// catalogue's export block declares (as the base has it) are committed
// with the lock: the very commit the same exports named by flags make. A
// flag that names a file replaces the block; a Compose setting alone
// changes the block's.
func TestProposeExportBlock(t *testing.T) {
	f := newFixture(t, nil)
	f.withExportBlock(`
export {
  compose {
    files        = ["deploy/compose.yaml"]
    project_name = "deploy"
  }
  env = ["deploy/images.env"]
}
`, map[string]string{"deploy/compose.yaml": deployCompose, "deploy/images.env": "# written by pin export\n"})
	res, err := f.run(f.options())
	if err != nil {
		t.Fatal(err)
	}
	p := res.Proposals[0]
	if !slices.Equal(p.Files, []string{"deploy/compose.pin.yaml", "deploy/images.env", "pin.lock.hcl"}) {
		t.Fatalf("files %v", p.Files)
	}
	if override, env := f.show(p.Commit, "deploy/compose.pin.yaml"), f.show(p.Commit, "deploy/images.env"); !strings.Contains(override, "image: "+forge127) || !strings.Contains(env, "FORGE_IMAGE="+forge127) {
		t.Errorf("override:\n%s\nenv:\n%s", override, env)
	}

	// The same exports named by flags: the same commit, already pushed.
	o := f.options()
	o.Exports = Exports{Compose: []ComposeExport{{Files: []string{"deploy/compose.yaml"}, ProjectName: "deploy"}}, Env: []string{"deploy/images.env"}}
	if again, err := f.run(o); err != nil || again.Proposals[0].Commit != p.Commit || again.Proposals[0].Outcome != OutcomeUpToDate {
		t.Fatalf("the same exports by flags: %v %+v", err, again)
	}

	// A flag that names a file replaces the block whole.
	o.Exports = Exports{Env: []string{"deploy/images.env"}}
	if res, err := f.run(o); err != nil || !slices.Equal(res.Proposals[0].Files, []string{"deploy/images.env", "pin.lock.hcl"}) {
		t.Fatalf("--export-env with a block: %v %+v", err, res)
	}

	// A Compose setting alone changes the block's: in place.
	o.Exports = Exports{Compose: []ComposeExport{{InPlace: true}}}
	res, err = f.run(o)
	if err != nil || !slices.Equal(res.Proposals[0].Files, []string{"deploy/compose.yaml", "deploy/images.env", "pin.lock.hcl"}) {
		t.Fatalf("--export-in-place with a block: %v %+v", err, res)
	}
	if c := f.show(res.Proposals[0].Commit, "deploy/compose.yaml"); !strings.Contains(c, "image: "+forge127+"\n") {
		t.Errorf("compose.yaml in place:\n%s", c)
	}
}

// TestProposeExportBlockBadInput: a block naming a path outside the
// repository, or one that is not there, and a Compose setting with no
// project to go to, are bad input that names the block's line; nothing is
// pushed. No path of the temporary work tree reaches the message.
func TestProposeExportBlockBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, block string
		exports     Exports
		want        []string
	}{
		{name: "outside", block: "\nexport {\n  env = [\"../elsewhere.env\"]\n}\n",
			want: []string{"the export block at catalogue.hcl:43,1-7 names ../elsewhere.env, outside the repository"}},
		{name: "not there", block: "\nexport {\n  compose {\n    files = [\"deploy/compose.yaml\"]\n  }\n}\n",
			want: []string{"the export block on main: catalogue.hcl:45:14: Export path not found: The Compose file deploy/compose.yaml does not exist. Create it, or fix the path: paths in the export block are relative to the folder of the catalogue file (.)."}},
		{name: "a setting without a project", block: "\nexport {\n  env = [\"deploy.env\"]\n}\n", exports: Exports{Compose: []ComposeExport{{ProjectName: "stack"}}},
			want: []string{"--export-project-name, --export-profile or --export-in-place without --export-compose: no Compose project to apply the setting to: the catalogue's export block at catalogue.hcl:43,1-7 has no compose block"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.withExportBlock(tc.block, nil)
			o := f.options()
			o.Exports = tc.exports
			_, err := f.run(o)
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("want bad input, got %v", err)
			}
			for _, w := range append(tc.want, "") {
				if !strings.Contains(err.Error(), w) || strings.Contains(err.Error(), "pin-propose-") {
					t.Errorf("the error lacks %q, or names the work tree:\n%v", w, err)
				}
			}
			if f.branch("pin/update") != "" {
				t.Error("pushed")
			}
		})
	}
}

// TestProposeComposeProjectIsTheCheckoutsFolder: a Compose file at the top
// of the repository is, without a project name, the project Compose names
// after the checkout's folder (here "clone"), in the work tree as in the
// checkout: runs_on { compose = "clone/next" } covers its service next,
// which another module's image would otherwise make ambiguous.
func TestProposeComposeProjectIsTheCheckoutsFolder(t *testing.T) {
	f := newFixture(t, func(s string) string {
		return s + `
module "forge-next" {
  image  = "registry.example.org/forge/forgejo"
  policy = "exact"
  pin    = "1.22.6@sha256:e8cb3b3125e6749cf5699a687da1e55dfd6a6e90d2343da333ae789259110665"
  runs_on "mesh-1" { compose = "clone/next" }
}
`
	})
	f.withExportBlock("\nexport {\n  compose {\n    files = [\"compose.yaml\"]\n  }\n}\n",
		map[string]string{"compose.yaml": "services:\n  next:\n    image: registry.example.org/forge/forgejo:1.22.6\n"})
	res, err := f.run(f.options())
	if err != nil {
		t.Fatal(err)
	}
	if o := f.show(res.Proposals[0].Commit, "compose.pin.yaml"); !strings.Contains(o, "  next:\n    image: registry.example.org/forge/forgejo:1.22.6@sha256:e8cb3b3125e6749cf5699a687da1e55dfd6a6e90d2343da333ae789259110665\n") {
		t.Errorf("service next is not forge-next's:\n%s", o)
	}
}
