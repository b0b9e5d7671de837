package catalogue

import (
	"path/filepath"
	"testing"
)

// TestKubernetesCatalogue loads Kubernetes hosts and the runs_on forms that
// take over workloads.
func TestKubernetesCatalogue(t *testing.T) {
	c, diags := Load("testdata/kubernetes")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	prod := c.Host("prod").Kubernetes
	if prod == nil {
		t.Fatal("host prod: no kubernetes settings")
	}
	if prod.Context != "prod" || prod.Namespace != "apps" || prod.Selector != nil {
		t.Errorf("prod = %+v", prod)
	}
	if want := filepath.Join("testdata", "kubernetes", "kube", "config"); prod.Kubeconfig != want {
		t.Errorf("prod kubeconfig = %q, want %q (relative to the catalogue's folder)", prod.Kubeconfig, want)
	}
	staging := c.Host("staging").Kubernetes
	if staging.Kubeconfig != "~/.kube/staging" || staging.Context != "" || staging.Namespace != "" {
		t.Errorf("staging = %+v; a ~/ path is kept for the host adapter to expand", staging)
	}
	if staging.Selector == nil || !staging.Selector.Matches(map[string]string{"team": "forge"}) || staging.Selector.Matches(map[string]string{"team": "web"}) {
		t.Errorf("staging selector = %v", staging.Selector)
	}
	if here := c.Host("here").Kubernetes; here == nil || *here != (Kubernetes{Range: here.Range}) {
		t.Errorf("here = %+v, want empty settings", here)
	}
	if c.Host("prod-copy").Kubernetes != nil {
		t.Error("a snapshot host has kubernetes settings")
	}

	ro := c.Module("forge").RunsOn
	if len(ro) != 4 {
		t.Fatalf("runs_on = %+v", ro)
	}
	if ro[0].Workload != "deployment/forgejo" || ro[0].Container != "forgejo" || ro[0].Selector != nil {
		t.Errorf("runs_on prod = %+v", ro[0])
	}
	sel := ro[1].Selector
	if sel == nil || ro[1].Workload != "" {
		t.Fatalf("runs_on staging = %+v", ro[1])
	}
	for _, tt := range []struct {
		set  map[string]string
		want bool
	}{
		{map[string]string{"app": "forgejo"}, true},
		{map[string]string{"app": "forgejo", "track": "canary"}, false},
		{map[string]string{"app": "web"}, false},
	} {
		if got := sel.Matches(tt.set); got != tt.want {
			t.Errorf("selector %q matches %v = %v, want %v", ro[1].SelectorText, tt.set, got, tt.want)
		}
	}
	if sel.String() != ro[1].SelectorText {
		t.Errorf("selector String() = %q, want the text as written, %q", sel.String(), ro[1].SelectorText)
	}
	if ro[2].Workload != "deployment/forgejo" || ro[3].Workload != "pod/forgejo-0" {
		t.Errorf("runs_on prod-copy, here = %+v, %+v", ro[2], ro[3])
	}
}
