package forge

import (
	"strings"
	"testing"
)

func TestParseRemote(t *testing.T) {
	for raw, want := range map[string]Remote{
		"https://github.com/pin-tool/pin.git":               {Web: "https://github.com/", Owner: "pin-tool", Name: "pin"},
		"http://pin:secret@127.0.0.1:3000/pin/incident.git": {Web: "http://127.0.0.1:3000/", Owner: "pin", Name: "incident"},
		"https://git.example.org/gitea/team/deploy":         {Web: "https://git.example.org/gitea/", Owner: "team", Name: "deploy"},
		"ssh://git@git.example.org:2222/team/deploy.git":    {Owner: "team", Name: "deploy"},
		"git@github.com:pin-tool/pin.git":                   {Owner: "pin-tool", Name: "pin"},
	} {
		got, err := ParseRemote(raw)
		if err != nil || got != want {
			t.Errorf("ParseRemote(%q) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
	for _, bad := range []string{"/srv/git/deploy.git", "https://example.org/deploy.git"} {
		if _, err := ParseRemote(bad); err == nil {
			t.Errorf("ParseRemote(%q): no error", bad)
		}
	}
	if _, err := ParseRemote("http://pin:secret@127.0.0.1:3000/x.git"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("an error names the password: %v", err)
	}
}
