package catalogue

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/hcl/v2"

	"github.com/pin-tool/pin/internal/version"
)

// Policy is a module's pin policy.
type Policy string

const (
	Exact          Policy = "exact"
	AtLeastRunning Policy = "at-least-running"
	TrackUpstream  Policy = "track-upstream"
)

// Policies lists the valid policies, in the order documentation names them.
var Policies = []Policy{Exact, AtLeastRunning, TrackUpstream}

// ModuleLabel is the container label that assigns a container to a module
// without naming the container in the catalogue.
const ModuleLabel = "pin.module"

// Catalogue is a loaded catalogue. Slices are sorted by name.
type Catalogue struct {
	Hosts      []*Host
	Registries []*Registry
	Modules    []*Module
	// Environments are the environment blocks (environment.go), sorted by
	// name; none means one implicit environment of every host, as before
	// environments existed.
	Environments []*Environment
	// Export is the export block (export.go); nil when there is none.
	Export *Export
	// Propose is the propose block (propose.go); nil when there is none.
	Propose *Propose
	// MinAge is the catalogue's min_age (minage.go): the default of every
	// track-upstream module that says none; zero for none.
	MinAge time.Duration
	// Files holds the parsed files, for rendering diagnostics with source
	// snippets.
	Files map[string]*hcl.File
}

// Host is a machine that runs containers, read live or from a snapshot.
type Host struct {
	Name string
	// Docker is the Docker Engine address (unix://, tcp://, ssh://); empty
	// with no Context, Snapshot or Kubernetes means what the Docker CLI
	// uses: DOCKER_HOST, DOCKER_CONTEXT, the Docker config's current
	// context, the default socket.
	Docker string
	// Context is a Docker CLI context (docker context ls), with its TLS
	// material; it excludes Docker, CertPath and TLSVerify.
	Context string
	// Kubernetes, when set, makes the host a namespace of a Kubernetes
	// cluster, read through its API server.
	Kubernetes *Kubernetes
	// Snapshot is the path of a snapshot file read instead of an engine.
	Snapshot string
	// TLS settings for tcp:// as the Docker CLI takes them.
	CertPath  string
	TLSVerify bool
	// Observations is where the host publishes what it runs ("pin observe
	// HOST"), read instead of the host itself: a file, a folder holding
	// HOST.json (absolute), or "oci://registry/repository" (tagged HOST).
	// Verify then says who must have signed them, and MaxAge how old they
	// may be (zero: the reader's default).
	Observations string
	Verify       *Verify
	MaxAge       time.Duration
	// SkipUnreachable lets a run go on without this host when it cannot
	// be read: its modules are resolved from the other hosts and the
	// previous lock, and the run says so. Without it, its modules are
	// refused.
	SkipUnreachable bool
	DeclRange       hcl.Range
}

// Kubernetes says which cluster and namespace a host is. Every field is
// optional: empty means what kubectl would use.
type Kubernetes struct {
	// Kubeconfig is the path of a kubeconfig file (absolute, relative paths
	// made so against the catalogue's folder, or starting with "~/"); empty
	// means KUBECONFIG, else ~/.kube/config, else the in-cluster config when
	// pin runs in a pod.
	Kubeconfig string
	// Context is the kubeconfig context; empty means its current context.
	Context string
	// Namespace is the namespace whose pods are read; empty means the
	// context's namespace, else "default".
	Namespace string
	// Selector, when set, limits the pods read to those it matches; nil
	// when absent or invalid. SelectorText is the selector as written.
	Selector     *Selector
	SelectorText string
	Range        hcl.Range
}

// Registry configures access to one registry host.
type Registry struct {
	// Host is the registry host as it appears in image names
	// ("registry.example.org", "index.docker.io").
	Host string
	// MirrorLayout is an OCI image layout folder used instead of the host.
	MirrorLayout string
	// MirrorHost is another registry host used instead of the host.
	MirrorHost string
	// Insecure allows plain http to this registry (loopback always may).
	Insecure bool
	// TokenHosts are hosts, beyond the registry's own and its parent
	// domain's, that may have its credentials as its token server
	// (nvcr.io's is authn.nvidia.com).
	TokenHosts []string
	// CAFile is a PEM bundle of CAs trusted for the registry, beside the
	// system's and those of its certs.d folder.
	CAFile string
	// ClientCert and ClientKey are a client certificate and its key
	// (PEM), presented instead of its certs.d folder's.
	ClientCert, ClientKey string
	// Verify is the verify block the registry's modules inherit.
	Verify    *Verify
	DeclRange hcl.Range
}

// Pin is what the catalogue author wrote in pin: a tag, a digest or both.
type Pin struct {
	Text   string
	Tag    string
	Digest string
}

// Module is one service and its pin policy.
type Module struct {
	Name string
	// Image is the full repository name, normalised
	// ("alpine" → "index.docker.io/library/alpine").
	Image  string
	Policy Policy
	Pin    Pin
	// Tag is a floating tag that track-upstream follows ("latest").
	Tag string
	// Constraint limits track-upstream candidates by semver range over the
	// version core; nil when absent.
	Constraint     *semver.Constraints
	ConstraintText string
	// Tags limits track-upstream candidates to tags matching it; nil when
	// absent.
	Tags       *regexp.Regexp
	Versioning version.Scheme
	// Prerelease lets track-upstream pick pre-releases.
	Prerelease bool
	// AnyVariant lets tags of different variants be compared.
	AnyVariant bool
	// Platforms are the platforms to resolve an index to when no running
	// container says which; empty means linux/amd64.
	Platforms []string
	// AllowDowngrade is the stated reason a downgrade is wanted; empty when
	// none is allowed.
	AllowDowngrade string
	// OneWay marks a service whose upgrades migrate data: a downgrade also
	// needs Restore, the backup it restores from.
	OneWay  bool
	Restore string
	RunsOn  []RunsOn
	// Verify is the signature policy an image needs to win: the module's
	// verify block, else its registry's; nil when neither has one.
	Verify *Verify
	// AllowUnverified is the stated reason to keep the locked image when
	// it can no longer be verified under Verify (its signature deleted,
	// its key rotated out, its identity changed); empty when none is. It
	// goes into the lock, as AllowDowngrade does.
	AllowUnverified   string
	allowUnverifiedAt *hcl.Range
	// MinAge is how old an upstream candidate of a track-upstream module
	// must be before it is picked (min_age, else the catalogue's): its
	// age counted from the later of its build date and the first time
	// pin saw its digest under its tag. Zero: none.
	MinAge    time.Duration
	minAgeSet bool

	DeclRange hcl.Range
	// attrs are where the attributes' values are, for diagnostics raised
	// after loading (AttrRange): a short list, not a map, which took
	// 690 bytes a module.
	attrs []attrRange
}

// attrRange is where an attribute's value is in the module's file.
type attrRange struct {
	name       string
	start, end hcl.Pos
}

// AttrRange is where the attribute name's value is written, and whether
// the module has it.
func (m *Module) AttrRange(name string) (hcl.Range, bool) {
	for _, a := range m.attrs {
		if a.name == name {
			return hcl.Range{Filename: m.DeclRange.Filename, Start: a.start, End: a.end}, true
		}
	}
	return hcl.Range{}, false
}

// RunsOn says where a module runs: a host and, on it, a container.
type RunsOn struct {
	Host string
	// Container is the container name; empty means containers labelled
	// pin.module=<module name>, or, with Workload or Selector, every
	// container of the pods they name.
	Container string
	// Workload, on a Kubernetes host, names the pods taken over by what
	// owns them: "deployment/<name>", "statefulset/<name>",
	// "daemonset/<name>", or one pod, "pod/<name>".
	Workload string
	// Selector, on a Kubernetes host, names the pods taken over by their
	// labels; nil when absent or invalid. SelectorText is the selector as
	// written. Workload and Selector exclude each other.
	Selector     *Selector
	SelectorText string
	// Compose, on a Docker host, names every container of one Compose
	// service, scaled replicas included: "<project>/<service>", matched
	// against the labels com.docker.compose.project and
	// com.docker.compose.service. It excludes Container, Workload and
	// Selector.
	Compose   string
	DeclRange hcl.Range
}

// The labels Docker Compose sets on the containers it creates.
const (
	ComposeProjectLabel = "com.docker.compose.project"
	ComposeServiceLabel = "com.docker.compose.service"
)

// WorkloadKind is the kind of object a runs_on workload names, the part of
// "<kind>/<name>" before the slash.
type WorkloadKind string

const (
	Deployment  WorkloadKind = "deployment"
	StatefulSet WorkloadKind = "statefulset"
	DaemonSet   WorkloadKind = "daemonset"
	// CronJob names the pods of every Job a CronJob started; Job those of
	// one Job that no CronJob owns.
	CronJob WorkloadKind = "cronjob"
	Job     WorkloadKind = "job"
	// Pod names one pod, whatever owns it.
	Pod WorkloadKind = "pod"
)

// WorkloadKinds are the kinds a runs_on workload may name, in the order
// documentation names them.
var WorkloadKinds = []WorkloadKind{Deployment, StatefulSet, DaemonSet, CronJob, Job, Pod}

// Module returns the module with the given name, or nil.
//
// Modules sorted by name (as Parse returns them) are found by a binary
// search; a Catalogue built in another order is scanned.
func (c *Catalogue) Module(name string) *Module {
	if i, ok := slices.BinarySearchFunc(c.Modules, name, func(m *Module, n string) int { return strings.Compare(m.Name, n) }); ok {
		return c.Modules[i]
	}
	for _, m := range c.Modules {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Host returns the host with the given name, or nil.
func (c *Catalogue) Host(name string) *Host {
	for _, h := range c.Hosts {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// Repositories returns the repositories of the modules whose images are on
// a registry host (spelled as in normalised image names: "index.docker.io"),
// in catalogue order.
func (c *Catalogue) Repositories(host string) []string {
	var out []string
	for _, m := range c.Modules {
		if h, _, ok := strings.Cut(m.Image, "/"); ok && h == host {
			out = append(out, m.Image)
		}
	}
	return out
}

// Registry returns the registry block for a registry host, or nil.
func (c *Catalogue) Registry(host string) *Registry {
	for _, r := range c.Registries {
		if r.Host == host {
			return r
		}
	}
	return nil
}

// Platform is the platform to resolve an index to, absent a running
// container that says: the module's first platform, else linux/amd64.
func (m *Module) Platform() string {
	if len(m.Platforms) > 0 {
		return m.Platforms[0]
	}
	return "linux/amd64"
}
