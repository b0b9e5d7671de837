package catalogue

import (
	"strings"
	"testing"
)

// TestSelector: a selector matches the label sets kubectl -l would select,
// keeps the text it was written as, and an absent one matches nothing.
func TestSelector(t *testing.T) {
	web := map[string]string{"app": "web", "tier": "front"}
	cache := map[string]string{"app": "web", "tier": "cache"}
	forge := map[string]string{"app": "forgejo"}
	none := map[string]string(nil)
	tests := []struct {
		text string
		set  map[string]string
		want bool
	}{
		{"app=web", web, true},
		{"app=web", forge, false},
		{"app=web", none, false},
		{"app==web,tier!=cache", web, true},
		{"app==web,tier!=cache", cache, false},
		{"app in (web, forgejo)", forge, true},
		{"app notin (web)", forge, true},
		{"app notin (web)", web, false},
		{"tier", web, true},
		{"tier", forge, false},
		{"!tier", forge, true},
		{"!tier", none, true},
	}
	for _, tt := range tests {
		sel, msg := ParseSelector(tt.text)
		if msg != "" {
			t.Fatalf("ParseSelector(%q): %s", tt.text, msg)
		}
		if got := sel.Matches(tt.set); got != tt.want {
			t.Errorf("%q matches %v = %v, want %v", tt.text, tt.set, got, tt.want)
		}
		if sel.String() != tt.text {
			t.Errorf("String() = %q, want %q as written", sel.String(), tt.text)
		}
	}
	var absent *Selector
	if absent.Matches(web) || absent.Matches(none) || absent.String() != "" {
		t.Error("a nil selector matches something, or has text")
	}
	if (&Selector{}).Matches(none) {
		t.Error("a zero selector matches something")
	}
}

func TestParseSelectorInvalid(t *testing.T) {
	for text, want := range map[string]string{
		"":            "The selector is empty",
		"  ":          "The selector is empty",
		"app in web":  "is not a label selector",
		"app=we b":    "is not a label selector",
		"=web":        "is not a label selector",
		"app=web,,x=": "is not a label selector",
	} {
		sel, msg := ParseSelector(text)
		if sel != nil || !strings.Contains(msg, want) {
			t.Errorf("ParseSelector(%q) = %v, %q; want nil and a message saying %q", text, sel, msg, want)
		}
	}
}

// TestWordLists: the messages for a wrong policy or workload kind list
// every valid word, in the documentation's order.
func TestWordLists(t *testing.T) {
	if want := `"exact", "at-least-running", "track-upstream"`; policyWords != want {
		t.Errorf("policyWords = %s, want %s", policyWords, want)
	}
	msg := parseWorkload("replicaset/forgejo-7d9f")
	if want := "kind one of deployment, statefulset, daemonset, cronjob, job, pod,"; !strings.Contains(msg, want) {
		t.Errorf("parseWorkload message %q does not say %q", msg, want)
	}
	for _, k := range WorkloadKinds {
		if msg := parseWorkload(string(k) + "/forgejo"); msg != "" {
			t.Errorf("kind %s refused: %s", k, msg)
		}
	}
}
