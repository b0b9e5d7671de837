package kubernetes

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/pin-tool/pin/internal/host"
)

// ObjectMeta reads the metadata of one object of the namespace that owns
// pods or jobs: a ReplicaSet, Deployment, StatefulSet or DaemonSet (API
// group apps), a Job or CronJob (batch), with one GET. It is what pin
// admit follows from a Pod to the workload it belongs to, and where it
// finds a workload's annotations. An object that does not exist is the
// API server's NotFound (apierrors.IsNotFound); a 403 says what to grant.
func (h Host) ObjectMeta(ctx context.Context, kind, name string) (*metav1.ObjectMeta, error) {
	cfg, ns, cs, err := h.client()
	if cfg == nil {
		return nil, host.Errorf(h.Name, "host %s (%s): configuring the client: %w", h.Name, h.describe(), err)
	}
	if err != nil {
		return nil, host.Errorf(h.Name, "host %s (%s, namespace %s): configuring the client: %w", h.Name, cfg.Host, ns, err)
	}
	var (
		c        rest.Interface
		resource string
		obj      interface {
			runtime.Object
			metav1.Object
		}
	)
	switch kind {
	case "ReplicaSet":
		c, resource, obj = cs.apps, "replicasets", &appsv1.ReplicaSet{}
	case "Deployment":
		c, resource, obj = cs.apps, "deployments", &appsv1.Deployment{}
	case "StatefulSet":
		c, resource, obj = cs.apps, "statefulsets", &appsv1.StatefulSet{}
	case "DaemonSet":
		c, resource, obj = cs.apps, "daemonsets", &appsv1.DaemonSet{}
	case "Job":
		c, resource, obj = cs.batch, "jobs", &batchv1.Job{}
	case "CronJob":
		c, resource, obj = cs.batch, "cronjobs", &batchv1.CronJob{}
	default:
		return nil, host.Errorf(h.Name, "host %s: pin reads no %s", h.Name, kind)
	}
	rctx, cancel := context.WithTimeout(ctx, cmp.Or(h.Timeout, DefaultTimeout))
	defer cancel()
	if err := c.Get().Namespace(ns).Resource(resource).Name(name).Do(rctx).Into(obj); err != nil {
		return nil, host.Errorf(h.Name, "host %s (%s, namespace %s): reading %s %s: %w", h.Name, cfg.Host, ns, kind, name, forbiddenGet(err))
	}
	meta := obj.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
	return meta, nil
}

// forbiddenGet adds to a 403 the permission pin admit lacks.
func forbiddenGet(err error) error {
	var st *apierrors.StatusError
	if !apierrors.IsForbidden(err) || !errors.As(err, &st) || st.ErrStatus.Details == nil {
		return err
	}
	d := st.ErrStatus.Details
	group := d.Group
	if group == "" {
		group = `"" (core)`
	}
	return fmt.Errorf("%w: pin admit's Role must allow verb get on resource %s in API group %s (see examples/kubernetes/admission/rbac.yaml)", err, d.Kind, group)
}
