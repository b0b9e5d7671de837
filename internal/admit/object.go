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
	// kind and name are the object's, as stored.
	kind, name  string
	annotations map[string]string
	podLabels   map[string]string
	// workload is "deployment/<name>" and so on, as host/kubernetes names
	// what owns a pod; pod is the pod's name, or "<name>-(new)" for a
	// template. For a Pod or a Job, workload is set by tracing its owners
	// (trace), from controller.
	workload, pod string
	// controller is the owner reference of a Pod or a Job that is its
	// controller; nil for none and for other kinds.
	controller *metav1.OwnerReference
	// owners are the objects the Pod or Job belongs to, nearest first
	// (ReplicaSet, Deployment; Job, CronJob), as tracing found them.
	owners []ref
	spec   corev1.PodSpec
}

// ref names an object of the namespace.
type ref struct{ kind, name string }

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

// ephemeral lists a Pod's ephemeral containers.
func (o *object) ephemeral() []container {
	var out []container
	for _, c := range o.spec.EphemeralContainers {
		out = append(out, container{c.Name, c.Image})
	}
	return out
}

// ephemeralImage is the image of the named ephemeral container, or "".
func (o *object) ephemeralImage(name string) string {
	for _, c := range o.ephemeral() {
		if c.name == name {
			return c.image
		}
	}
	return ""
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
		return &object{kind: kind, name: meta.Name, annotations: meta.Annotations, podLabels: t.Labels, workload: kindWord + "/" + meta.Name,
			pod: meta.Name + "-(new)", spec: t.Spec}
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
		o := fromTemplate("job", d.ObjectMeta, d.Spec.Template)
		o.controller = controllerOf(d.OwnerReferences)
		return o, nil
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
		return &object{kind: kind, name: name, annotations: p.Annotations, podLabels: p.Labels, workload: "pod/" + name, pod: name,
			controller: controllerOf(p.OwnerReferences), spec: p.Spec}, nil
	}
	return nil, errNotWorkload
}

// controllerOf returns the owner reference that is the object's
// controller, or nil.
func controllerOf(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if r := &refs[i]; r.Controller != nil && *r.Controller {
			return r
		}
	}
	return nil
}

// deploymentByName names the Deployment of a pod's ReplicaSet from names
// alone: "<deployment>-<pod-template-hash>", as the Deployment controller
// names it. It is used when the ReplicaSet is not read.
func deploymentByName(podLabels map[string]string, rs string) (string, bool) {
	h := podLabels["pod-template-hash"]
	if h == "" {
		return "", false
	}
	return strings.CutSuffix(rs, "-"+h)
}
