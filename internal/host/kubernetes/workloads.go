package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// reader lists the objects of one namespace, a page at a time.
type reader struct {
	cs      *apiClient
	ns      string
	timeout time.Duration
}

// list calls page once per page, each under its own timeout, until the
// server has no more; page returns the continue token of its page.
func (r reader) list(ctx context.Context, opts metav1.ListOptions, page func(context.Context, metav1.ListOptions) (string, error)) error {
	opts.Limit = PageSize
	for {
		pctx, cancel := context.WithTimeout(ctx, r.timeout)
		next, err := page(pctx, opts)
		cancel()
		if err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		opts.Continue = next
	}
}

// owners maps the controllers of pods to their workloads: a ReplicaSet's
// name to its Deployment's, a Job's name to its CronJob's.
type owners struct {
	deployments map[string]string
	cronJobs    map[string]string
}

// owners lists what it takes to name the workload of each pod: the
// ReplicaSets when some pod is owned by one (ReplicaSet → Deployment), the
// Jobs when some pod is owned by one (Job → CronJob). Nothing is listed
// that no pod needs.
func (r reader) owners(ctx context.Context, pods []corev1.Pod) (owners, error) {
	o := owners{deployments: map[string]string{}, cronJobs: map[string]string{}}
	if ownedBy(pods, "ReplicaSet") {
		err := r.list(ctx, metav1.ListOptions{}, func(ctx context.Context, opts metav1.ListOptions) (string, error) {
			l, err := listPage[appsv1.ReplicaSetList](ctx, r.cs.apps, r.ns, "replicasets", opts)
			if err != nil {
				return "", err
			}
			for _, rs := range l.Items {
				if d := controller(rs.OwnerReferences); d != nil && d.Kind == "Deployment" && d.APIVersion == appsv1.SchemeGroupVersion.String() {
					o.deployments[rs.Name] = d.Name
				}
			}
			return l.Continue, nil
		})
		if err != nil {
			return o, err
		}
	}
	if ownedBy(pods, "Job") {
		err := r.list(ctx, metav1.ListOptions{}, func(ctx context.Context, opts metav1.ListOptions) (string, error) {
			l, err := listPage[batchv1.JobList](ctx, r.cs.batch, r.ns, "jobs", opts)
			if err != nil {
				return "", err
			}
			for _, j := range l.Items {
				if c := controller(j.OwnerReferences); c != nil && c.Kind == "CronJob" && c.APIVersion == batchv1.SchemeGroupVersion.String() {
					o.cronJobs[j.Name] = c.Name
				}
			}
			return l.Continue, nil
		})
		if err != nil {
			return o, err
		}
	}
	return o, nil
}

// workload names what a pod belongs to: "deployment/<name>" through its
// ReplicaSet, "cronjob/<name>" through its Job, else its controller as
// "<kind>/<name>" ("statefulset/db", "daemonset/agent", "job/migrate",
// "replicaset/<name>" for one no Deployment owns), else "pod/<name>".
func (o owners) workload(p *corev1.Pod) string {
	c := controller(p.OwnerReferences)
	if c == nil {
		return "pod/" + p.Name
	}
	switch c.Kind {
	case "ReplicaSet":
		if d, ok := o.deployments[c.Name]; ok {
			return "deployment/" + d
		}
	case "Job":
		if cj, ok := o.cronJobs[c.Name]; ok {
			return "cronjob/" + cj
		}
	}
	return strings.ToLower(c.Kind) + "/" + c.Name
}

// idleWorkload is the pod template of a workload no replica runs.
type idleWorkload struct {
	workload string
	spec     corev1.PodTemplateSpec
}

// scaledToZero lists the namespace's Deployments and StatefulSets (one
// paged list each) and returns those scaled to zero whose template's
// labels match sel, in list order.
func (r reader) scaledToZero(ctx context.Context, sel labels.Selector) ([]idleWorkload, error) {
	var out []idleWorkload
	zero := func(n *int32) bool { return n != nil && *n == 0 }
	keep := func(workload string, replicas *int32, t corev1.PodTemplateSpec) {
		if zero(replicas) && sel.Matches(labels.Set(t.Labels)) {
			out = append(out, idleWorkload{workload: workload, spec: t})
		}
	}
	err := r.list(ctx, metav1.ListOptions{}, func(ctx context.Context, opts metav1.ListOptions) (string, error) {
		l, err := listPage[appsv1.DeploymentList](ctx, r.cs.apps, r.ns, "deployments", opts)
		if err != nil {
			return "", err
		}
		for _, d := range l.Items {
			keep("deployment/"+d.Name, d.Spec.Replicas, d.Spec.Template)
		}
		return l.Continue, nil
	})
	if err != nil {
		return nil, err
	}
	err = r.list(ctx, metav1.ListOptions{}, func(ctx context.Context, opts metav1.ListOptions) (string, error) {
		l, err := listPage[appsv1.StatefulSetList](ctx, r.cs.apps, r.ns, "statefulsets", opts)
		if err != nil {
			return "", err
		}
		for _, s := range l.Items {
			keep("statefulset/"+s.Name, s.Spec.Replicas, s.Spec.Template)
		}
		return l.Continue, nil
	})
	return out, err
}

func ownedBy(pods []corev1.Pod, kind string) bool {
	for _, p := range pods {
		if c := controller(p.OwnerReferences); c != nil && c.Kind == kind {
			return true
		}
	}
	return false
}

// controller returns the owner reference that is the object's controller,
// or nil.
func controller(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if r := &refs[i]; r.Controller != nil && *r.Controller {
			return r
		}
	}
	return nil
}

// forbidden adds to a 403 the permission pin lacks and where its Role is:
// the API server's message names the verb and resource, and this says what
// to grant.
func forbidden(err error) error {
	var st *apierrors.StatusError
	if !apierrors.IsForbidden(err) || !errors.As(err, &st) {
		return err
	}
	d := st.ErrStatus.Details
	if d == nil || d.Kind == "" {
		return err
	}
	group := d.Group
	if group == "" {
		group = `"" (core)`
	}
	return fmt.Errorf("%w: pin's Role must allow verb list on resource %s in API group %s (see examples/kubernetes/rbac.yaml)", err, d.Kind, group)
}
