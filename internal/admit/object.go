package admit

import (
	"encoding/json"
	"errors"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// errNotWorkload: a kind whose images pin admit does not judge.
var errNotWorkload = errors.New("not a workload pin admit judges")

// object is what pin admit reads of an admitted object: the pod spec it
// runs and how observe names its containers' workload.
type object struct {
	annotations map[string]string
	podLabels   map[string]string
	// workload is "deployment/<name>" and so on, as host/kubernetes names
	// what owns a pod; pod is the pod's name, or "<name>-(new)" for a
	// template.
	workload, pod string
	spec          corev1.PodSpec
}

type container struct{ name, image string }

// containers lists the init and app containers, in the spec's order.
func (o *object) containers() []container {
	var out []container
	for _, c := range o.spec.InitContainers {
		out = append(out, container{c.Name, c.Image})
	}
	for _, c := range o.spec.Containers {
		out = append(out, container{c.Name, c.Image})
	}
	return out
}

// image is the image of the named container, or "".
func (o *object) image(name string) string {
	for _, c := range o.containers() {
		if c.name == name {
			return c.image
		}
	}
	return ""
}

// decodeObject reads the object of an admitted kind.
func decodeObject(kind string, raw []byte) (*object, error) {
	fromTemplate := func(kindWord string, meta metav1.ObjectMeta, t corev1.PodTemplateSpec) *object {
		return &object{annotations: meta.Annotations, podLabels: t.Labels, workload: kindWord + "/" + meta.Name, pod: meta.Name + "-(new)", spec: t.Spec}
	}
	switch kind {
	case "Deployment":
		var d appsv1.Deployment
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		return fromTemplate("deployment", d.ObjectMeta, d.Spec.Template), nil
	case "StatefulSet":
		var d appsv1.StatefulSet
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		return fromTemplate("statefulset", d.ObjectMeta, d.Spec.Template), nil
	case "DaemonSet":
		var d appsv1.DaemonSet
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		return fromTemplate("daemonset", d.ObjectMeta, d.Spec.Template), nil
	case "Job":
		var d batchv1.Job
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		return fromTemplate("job", d.ObjectMeta, d.Spec.Template), nil
	case "CronJob":
		var d batchv1.CronJob
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		return fromTemplate("cronjob", d.ObjectMeta, d.Spec.JobTemplate.Spec.Template), nil
	case "Pod":
		var p corev1.Pod
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		name := p.Name
		if name == "" {
			name = p.GenerateName + "(new)"
		}
		return &object{annotations: p.Annotations, podLabels: p.Labels, workload: podWorkload(&p, name), pod: name, spec: p.Spec}, nil
	}
	return nil, errNotWorkload
}

// podWorkload names what owns a pod as host/kubernetes does. A pod of a
// ReplicaSet is a Deployment's when the ReplicaSet's name is
// "<deployment>-<pod-template-hash>", as the Deployment controller names
// it: the webhook does not read ReplicaSets to know.
func podWorkload(p *corev1.Pod, name string) string {
	for _, r := range p.OwnerReferences {
		if r.Controller == nil || !*r.Controller {
			continue
		}
		if h := p.Labels["pod-template-hash"]; r.Kind == "ReplicaSet" && h != "" {
			if d, ok := strings.CutSuffix(r.Name, "-"+h); ok {
				return "deployment/" + d
			}
		}
		return strings.ToLower(r.Kind) + "/" + r.Name
	}
	return "pod/" + name
}
