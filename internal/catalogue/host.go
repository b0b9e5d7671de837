package catalogue

import (
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"k8s.io/apimachinery/pkg/util/validation"
)

var (
	hostSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "docker"}, {Name: "snapshot"}, {Name: "cert_path"}, {Name: "tls_verify"},
		{Name: "kubernetes"}, {Name: "context"},
		{Name: "observations"}, {Name: "max_age"}, {Name: "skip_unreachable"},
	}, Blocks: []hcl.BlockHeaderSchema{{Type: "verify"}}}
)

func (l *loader) host(b *hcl.Block, dir string) hcl.Diagnostics {
	h := &Host{Name: b.Labels[0], DeclRange: b.DefRange}
	content, diags := b.Body.Content(hostSchema)
	if prev, ok := l.hosts[h.Name]; ok {
		diags = append(diags, errorf(b.LabelRanges[0], "Duplicate host", "A host named %q is already defined at %s. Give each host a unique name, or merge the two blocks.", h.Name, prev.DeclRange))
	} else {
		l.hosts[h.Name] = h
		l.c.Hosts = append(l.c.Hosts, h)
	}
	a := content.Attributes
	diags = append(diags, str(a["docker"], &h.Docker)...)
	diags = append(diags, str(a["snapshot"], &h.Snapshot)...)
	diags = append(diags, str(a["cert_path"], &h.CertPath)...)
	diags = append(diags, boolean(a["tls_verify"], &h.TLSVerify)...)
	diags = append(diags, str(a["context"], &h.Context)...)
	if h.Context != "" {
		for _, other := range []string{"docker", "snapshot", "cert_path", "tls_verify"} {
			if oa := a[other]; oa != nil {
				diags = append(diags, errorf(oa.Range, "Conflicting host sources", "Host %q names both context and %s. A Docker context holds the address and its TLS material: keep context = %q alone, or drop it and write docker (with cert_path and tls_verify).", h.Name, other, h.Context))
			}
		}
	}
	if h.Docker != "" && h.Snapshot != "" {
		diags = append(diags, errorf(a["snapshot"].Range, "Conflicting host sources", "Host %q names both docker and snapshot. Write docker to read the engine live, or snapshot to read a file, not both.", h.Name))
	}
	if attr := a["kubernetes"]; attr != nil {
		k, d := kubernetesHost(attr, dir)
		h.Kubernetes = k
		diags = append(diags, d...)
		for _, other := range []string{"docker", "snapshot", "cert_path", "tls_verify", "context"} {
			if oa := a[other]; oa != nil {
				diags = append(diags, errorf(oa.Range, "Conflicting host sources", "Host %q names both kubernetes and %s, which belongs to another kind of host. Keep kubernetes to read the cluster, and define the other source as a host of its own.", h.Name, other))
			}
		}
	}
	if h.Docker != "" {
		scheme, _, _ := strings.Cut(h.Docker, "://")
		switch scheme {
		case "unix", "tcp", "ssh", "npipe", "http", "https":
		default:
			diags = append(diags, errorf(a["docker"].Expr.Range(), "Invalid Docker address", "%q is not a Docker Engine address. Write unix:///var/run/docker.sock, tcp://host:2376 or ssh://user@host.", h.Docker))
		}
	}
	diags = append(diags, boolean(a["skip_unreachable"], &h.SkipUnreachable)...)
	diags = append(diags, observations(h, b, content, dir)...)
	if h.Snapshot != "" && !filepath.IsAbs(h.Snapshot) {
		h.Snapshot = filepath.Join(dir, h.Snapshot)
	}
	if h.CertPath != "" && !filepath.IsAbs(h.CertPath) {
		h.CertPath = filepath.Join(dir, h.CertPath)
	}
	return diags
}

// kubernetesSettings are the keys of a host's kubernetes object.
var kubernetesSettings = []string{"kubeconfig", "context", "namespace", "selector"}

// kubernetesHost reads kubernetes = { context = "…", namespace = "…", … }.
func kubernetesHost(attr *hcl.Attribute, dir string) (*Kubernetes, hcl.Diagnostics) {
	k := &Kubernetes{Range: attr.Range}
	pairs, d := hcl.ExprMap(attr.Expr)
	if d.HasErrors() {
		return k, hcl.Diagnostics{errorf(attr.Expr.Range(), "Invalid kubernetes setting", "kubernetes is an object, such as kubernetes = { context = \"prod\", namespace = \"apps\" }; write {} for kubectl's current context and its namespace.")}
	}
	var diags hcl.Diagnostics
	seen := map[string]bool{}
	for _, p := range pairs {
		kv, d := p.Key.Value(nil)
		if d.HasErrors() || kv.Type() != cty.String || kv.IsNull() || !kv.IsKnown() {
			diags = append(diags, errorf(p.Key.Range(), "Unsupported kubernetes setting", "Keys of kubernetes are names: write %s.", strings.Join(kubernetesSettings, ", ")))
			continue
		}
		key := kv.AsString()
		var dst *string
		switch key {
		case "kubeconfig":
			dst = &k.Kubeconfig
		case "context":
			dst = &k.Context
		case "namespace":
			dst = &k.Namespace
		case "selector":
			dst = &k.SelectorText
		default:
			diags = append(diags, errorf(p.Key.Range(), "Unsupported kubernetes setting", "%q is not a setting of a Kubernetes host. Write one of %s.", key, strings.Join(kubernetesSettings, ", ")))
			continue
		}
		if seen[key] {
			diags = append(diags, errorf(p.Key.Range(), "Duplicate kubernetes setting", "%s is set twice. Keep one.", key))
			continue
		}
		seen[key] = true
		diags = append(diags, str(&hcl.Attribute{Name: key, Expr: p.Value, Range: p.Value.Range()}, dst)...)
		switch {
		case key == "namespace" && k.Namespace != "":
			if errs := validation.IsDNS1123Label(k.Namespace); len(errs) > 0 {
				diags = append(diags, errorf(p.Value.Range(), "Invalid namespace", "%q is not a Kubernetes namespace name: %s. Write it as kubectl get namespaces lists it.", k.Namespace, strings.Join(errs, "; ")))
			}
		case key == "selector":
			sel, msg := ParseSelector(k.SelectorText)
			if msg != "" {
				diags = append(diags, errorf(p.Value.Range(), "Invalid label selector", "%s", msg))
			}
			k.Selector = sel
		case key == "kubeconfig" && k.Kubeconfig != "":
			if !filepath.IsAbs(k.Kubeconfig) && !strings.HasPrefix(k.Kubeconfig, "~/") {
				k.Kubeconfig = filepath.Join(dir, k.Kubeconfig)
			}
		}
	}
	return k, diags
}
