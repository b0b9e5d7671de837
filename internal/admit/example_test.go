package admit

import (
	"os"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// TestExampleIsHighlyAvailable: the example Deployment reads strictly as
// an apps/v1 Deployment and is ready on /readyz, spread over nodes, and
// never takes a replica down before its successor is ready; the
// PodDisruptionBudget reads strictly and covers its pods.
func TestExampleIsHighlyAvailable(t *testing.T) {
	var d appsv1.Deployment
	read(t, "../../examples/kubernetes/admission/deployment.yaml", &d)
	var pdb policyv1.PodDisruptionBudget
	read(t, "../../examples/kubernetes/admission/poddisruptionbudget.yaml", &pdb)

	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas %v: an HA webhook needs at least two", d.Spec.Replicas)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
		t.Errorf("readinessProbe %+v: want GET /readyz", p)
	}
	spreadByNode := false
	for _, s := range d.Spec.Template.Spec.TopologySpreadConstraints {
		if s.TopologyKey == "kubernetes.io/hostname" && s.WhenUnsatisfiable == "DoNotSchedule" &&
			labels.SelectorFromSet(s.LabelSelector.MatchLabels).Matches(labels.Set(d.Spec.Template.Labels)) {
			spreadByNode = true
		}
	}
	if !spreadByNode {
		t.Errorf("no topology spread over nodes that selects the webhook's pods: %+v", d.Spec.Template.Spec.TopologySpreadConstraints)
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Errorf("rolling update %+v: want maxUnavailable 0", ru)
	}
	if pdb.Namespace != d.Namespace || pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 1 ||
		!labels.SelectorFromSet(pdb.Spec.Selector.MatchLabels).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the PodDisruptionBudget does not keep a webhook pod: %+v", pdb)
	}
}

func read(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
