package kubernetes

import (
	"context"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// apiClient lists the five kinds pin reads (Pods, ReplicaSets, Jobs,
// Deployments, StatefulSets) through client-go's REST client, with a
// scheme of only their three API groups.
//
// client-go's clientset (k8s.io/client-go/kubernetes) would do the same
// requests, but linking it registers every API group Kubernetes has when
// any pin command starts: on the clientset pin's binary was 88 MiB and
// `pin --help` touched 47 MiB of memory and spent 7 ms in its scheme's
// init; internal/depcheck keeps it out of the binary.
type apiClient struct {
	core, apps, batch rest.Interface
}

// codecs are the scheme of the three groups and its codecs, built on the
// first client (not at start-up: most runs read no cluster).
var codecs = sync.OnceValues(func() (serializer.CodecFactory, runtime.ParameterCodec) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err) // the generated registrations of k8s.io/api cannot fail
		}
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(s), runtime.NewParameterCodec(s)
})

// newAPIClient returns the client of the three groups, sharing one HTTP
// client (one connection pool), as the clientset's NewForConfig does.
func newAPIClient(cfg *rest.Config) (*apiClient, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	f, _ := codecs()
	group := func(gv schema.GroupVersion, path string) (rest.Interface, error) {
		c := rest.CopyConfig(cfg)
		c.GroupVersion = &gv
		c.APIPath = path
		c.NegotiatedSerializer = f.WithoutConversion()
		return rest.RESTClientForConfigAndClient(c, hc)
	}
	core, err := group(corev1.SchemeGroupVersion, "/api")
	if err != nil {
		return nil, err
	}
	apps, err := group(appsv1.SchemeGroupVersion, "/apis")
	if err != nil {
		return nil, err
	}
	batch, err := group(batchv1.SchemeGroupVersion, "/apis")
	if err != nil {
		return nil, err
	}
	return &apiClient{core: core, apps: apps, batch: batch}, nil
}

// list asks for one page of a namespaced resource, as the generated typed
// clients do: listPage[corev1.PodList](ctx, c.core, ns, "pods", opts).
func listPage[T any, L interface {
	*T
	runtime.Object
}](ctx context.Context, c rest.Interface, ns, resource string, opts metav1.ListOptions) (L, error) {
	_, params := codecs()
	out := L(new(T))
	return out, c.Get().Namespace(ns).Resource(resource).VersionedParams(&opts, params).Do(ctx).Into(out)
}
