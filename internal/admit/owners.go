package admit

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/resolve"
)

// Owners reads, in a guarded namespace, the objects that own pods and
// jobs: what a Pod or a Job belongs to is what the API server stores, not
// what names suggest. The Kubernetes host adapter
// (internal/host/kubernetes.Host) is one.
type Owners interface {
	// ObjectMeta reads the metadata of the namespace's object of kind
	// (ReplicaSet, Deployment, StatefulSet, DaemonSet, Job, CronJob) named
	// name; one that does not exist is an error for which
	// apierrors.IsNotFound holds.
	ObjectMeta(ctx context.Context, kind, name string) (*metav1.ObjectMeta, error)
}

// The API versions of the owners host/kubernetes follows.
const (
	appsV1  = "apps/v1"
	batchV1 = "batch/v1"
)

// tracer reads the owners of one request's objects, each at most once.
type tracer struct {
	owners Owners
	read   map[ref]*metav1.ObjectMeta
}

func newTracer(o Owners) *tracer { return &tracer{owners: o, read: map[ref]*metav1.ObjectMeta{}} }

// meta reads r; nil, nil when there is no reader or no such object.
func (t *tracer) meta(ctx context.Context, r ref) (*metav1.ObjectMeta, error) {
	if t.owners == nil {
		return nil, nil
	}
	if m, ok := t.read[r]; ok {
		return m, nil
	}
	m, err := t.owners.ObjectMeta(ctx, r.kind, r.name)
	if apierrors.IsNotFound(err) {
		m, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s, which owns it: %w", r.kind, r.name, err)
	}
	t.read[r] = m
	return m, nil
}

// trace names what a Pod or a Job belongs to as host/kubernetes names it,
// following controllers up: a Job's CronJob (from the Job itself); a
// Pod's ReplicaSet to its Deployment and a Pod's Job to its CronJob, read
// from the API server when deep (a module names such a workload on the
// host), else from names (a ReplicaSet "<deployment>-<pod-template-hash>").
// It sets obj.workload and obj.owners.
func (t *tracer) trace(ctx context.Context, obj *object, deep bool) error {
	c := obj.controller
	if c == nil {
		return nil
	}
	if obj.kind == "Job" {
		if c.Kind == "CronJob" && c.APIVersion == batchV1 {
			obj.workload, obj.owners = "cronjob/"+c.Name, []ref{{"CronJob", c.Name}}
		}
		return nil
	}
	if obj.kind != "Pod" {
		return nil
	}
	obj.workload, obj.owners = strings.ToLower(c.Kind)+"/"+c.Name, []ref{{c.Kind, c.Name}}
	var m *metav1.ObjectMeta
	if deep && (c.Kind == "ReplicaSet" || c.Kind == "Job") {
		var err error
		if m, err = t.meta(ctx, ref{c.Kind, c.Name}); err != nil {
			return err
		}
	}
	var up *metav1.OwnerReference
	if m != nil {
		up = controllerOf(m.OwnerReferences)
	}
	switch {
	case c.Kind == "ReplicaSet" && m != nil:
		if up != nil && up.Kind == "Deployment" && up.APIVersion == appsV1 {
			obj.workload, obj.owners = "deployment/"+up.Name, append(obj.owners, ref{"Deployment", up.Name})
		}
	case c.Kind == "ReplicaSet":
		if d, ok := deploymentByName(obj.podLabels, c.Name); ok {
			obj.workload, obj.owners = "deployment/"+d, append(obj.owners, ref{"Deployment", d})
		}
	case c.Kind == "Job" && up != nil && up.Kind == "CronJob" && up.APIVersion == batchV1:
		obj.workload, obj.owners = "cronjob/"+up.Name, append(obj.owners, ref{"CronJob", up.Name})
	}
	return nil
}

// ownerOverride finds the override on the objects obj belongs to, nearest
// first, up to two levels (a Pod's ReplicaSet and Deployment, or Job and
// CronJob; a Job's CronJob): annotating a Deployment reaches the Pods its
// ReplicaSet creates. found is false when none says why.
func (t *tracer) ownerOverride(ctx context.Context, obj *object, how string) (ov resolve.Override, found bool, err error) {
	var next *ref
	if len(obj.owners) > 0 {
		next = &obj.owners[0]
	}
	for range 2 {
		if next == nil {
			break
		}
		m, err := t.meta(ctx, *next)
		if err != nil || m == nil {
			return ov, false, err
		}
		if o := enforce.Override(m.Annotations, how); o.Downgrade != "" {
			return o, true, nil
		}
		next = nil
		if up := controllerOf(m.OwnerReferences); up != nil && (up.APIVersion == appsV1 || up.APIVersion == batchV1) {
			next = &ref{up.Kind, up.Name}
		}
	}
	return ov, false, nil
}

// howOf says where to give the override of obj: on the workload it
// belongs to (or on obj itself).
func howOf(obj *object) string {
	if n := len(obj.owners); n > 0 {
		top := obj.owners[n-1]
		return fmt.Sprintf("annotate the %s %s (which this %s belongs to) or the %s with", top.kind, top.name, obj.kind, obj.kind)
	}
	return "annotate the " + obj.kind + " with"
}

// tracesOwners reports whether a module names, on hostName, a workload
// that a Pod reaches only through its owners (deployment/, replicaset/,
// cronjob/, job/): only then are a Pod's owners read.
func tracesOwners(cat *catalogue.Catalogue, hostName string) bool {
	for _, m := range cat.Modules {
		for _, ro := range m.RunsOn {
			if ro.Host == hostName && ro.Workload != "" && !strings.HasPrefix(ro.Workload, "pod/") {
				return true
			}
		}
	}
	return false
}
