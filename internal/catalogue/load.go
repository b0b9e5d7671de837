package catalogue

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/pin-tool/pin/internal/version"
)

// DefaultPath is the catalogue read when none is named.
const DefaultPath = "catalogue.hcl"

var (
	rootSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "host", LabelNames: []string{"name"}},
		{Type: "registry", LabelNames: []string{"host"}},
		{Type: "module", LabelNames: []string{"name"}},
	}}
	hostSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "docker"}, {Name: "snapshot"}, {Name: "cert_path"}, {Name: "tls_verify"},
		{Name: "kubernetes"},
	}}
	registrySchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "mirror"}, {Name: "insecure"}, {Name: "token_hosts"},
	}}
	moduleSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "image", Required: true}, {Name: "policy", Required: true},
			{Name: "pin"}, {Name: "tag"}, {Name: "constraint"}, {Name: "tags"},
			{Name: "versioning"}, {Name: "prerelease"}, {Name: "any_variant"},
			{Name: "platforms"}, {Name: "allow_downgrade"}, {Name: "one_way"},
			{Name: "restore"},
		},
		Blocks: []hcl.BlockHeaderSchema{{Type: "runs_on", LabelNames: []string{"host"}}},
	}
	runsOnSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "container"}, {Name: "workload"}, {Name: "selector"},
	}}
)

// Load reads the catalogue at path: one HCL file, or every *.hcl file in a
// folder. It returns every problem found, in every file, as diagnostics.
func Load(path string) (*Catalogue, hcl.Diagnostics) {
	files, err := catalogueFiles(path)
	if err != nil {
		return &Catalogue{}, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read catalogue",
			Detail:   fmt.Sprintf("%v. Name a catalogue file or folder with --catalogue, or create %s.", err, DefaultPath),
		}}
	}
	srcs := make([]Source, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return &Catalogue{}, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read catalogue", Detail: err.Error() + "."}}
		}
		srcs = append(srcs, Source{Filename: f, Bytes: b})
	}
	return Parse(srcs...)
}

// Source is one catalogue file's name and content.
type Source struct {
	Filename string
	Bytes    []byte
}

// Parse reads a catalogue from its files' contents; relative paths are taken
// relative to each file's folder.
func Parse(srcs ...Source) (*Catalogue, hcl.Diagnostics) {
	p := hclparse.NewParser()
	c := &Catalogue{}
	l := loader{c: c, hosts: map[string]*Host{}, regs: map[string]*Registry{}, mods: map[string]*Module{}}
	var diags hcl.Diagnostics
	for _, src := range srcs {
		file, d := p.ParseHCL(src.Bytes, src.Filename)
		diags = append(diags, d...)
		if file != nil {
			diags = append(diags, l.file(file, filepath.Dir(src.Filename))...)
		}
	}
	c.Files = p.Files()
	diags = append(diags, l.crossCheck()...)
	sort.Slice(c.Hosts, func(i, j int) bool { return c.Hosts[i].Name < c.Hosts[j].Name })
	sort.Slice(c.Registries, func(i, j int) bool { return c.Registries[i].Host < c.Registries[j].Host })
	sort.Slice(c.Modules, func(i, j int) bool { return c.Modules[i].Name < c.Modules[j].Name })
	return c, diags
}

func catalogueFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.hcl"))
	if err != nil {
		return nil, err
	}
	// The lockfile may live in the catalogue folder; it is not a catalogue.
	out := files[:0]
	for _, f := range files {
		if !strings.HasSuffix(f, ".lock.hcl") {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("folder %s holds no *.hcl file", path)
	}
	sort.Strings(out)
	return out, nil
}

type loader struct {
	c     *Catalogue
	hosts map[string]*Host
	regs  map[string]*Registry
	mods  map[string]*Module
}

func errorf(rng hcl.Range, summary, detail string, args ...any) *hcl.Diagnostic {
	r := rng
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(detail, args...), Subject: &r}
}

func warnf(rng hcl.Range, summary, detail string, args ...any) *hcl.Diagnostic {
	d := errorf(rng, summary, detail, args...)
	d.Severity = hcl.DiagWarning
	return d
}

func (l *loader) file(f *hcl.File, dir string) hcl.Diagnostics {
	content, diags := f.Body.Content(rootSchema)
	for _, b := range content.Blocks {
		switch b.Type {
		case "host":
			diags = append(diags, l.host(b, dir)...)
		case "registry":
			diags = append(diags, l.registry(b, dir)...)
		case "module":
			diags = append(diags, l.module(b)...)
		}
	}
	return diags
}

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
	if h.Docker != "" && h.Snapshot != "" {
		diags = append(diags, errorf(a["snapshot"].Range, "Conflicting host sources", "Host %q names both docker and snapshot. Write docker to read the engine live, or snapshot to read a file, not both.", h.Name))
	}
	if attr := a["kubernetes"]; attr != nil {
		k, d := kubernetesHost(attr, dir)
		h.Kubernetes = k
		diags = append(diags, d...)
		for _, other := range []string{"docker", "snapshot", "cert_path", "tls_verify"} {
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
			sel, msg := parseSelector(k.SelectorText)
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

// parseSelector reads a label selector as kubectl -l takes it. It returns a
// message saying what to write instead when the selector is invalid or
// empty (which would match every pod).
func parseSelector(s string) (labels.Selector, string) {
	if strings.TrimSpace(s) == "" {
		return nil, "The selector is empty, which matches every pod. Write labels to match, as kubectl -l takes them, such as \"app=forgejo\" or \"app in (forgejo),tier!=cache\"."
	}
	sel, err := labels.Parse(s)
	if err != nil {
		return nil, fmt.Sprintf("%q is not a label selector (%v). Write one as kubectl -l takes it, such as \"app=forgejo\" or \"app in (forgejo),tier!=cache\".", s, err)
	}
	return sel, ""
}

// parseWorkload checks a runs_on workload, "<kind>/<name>". It returns a
// message saying what to write instead when the workload is invalid.
func parseWorkload(s string) string {
	kind, name, ok := strings.Cut(s, "/")
	if !ok || !slices.Contains(WorkloadKinds, kind) {
		return fmt.Sprintf("%q does not name a workload. Write <kind>/<name> with kind one of %s, in lowercase, such as \"deployment/forgejo\" or \"pod/forgejo-0\".", s, strings.Join(WorkloadKinds, ", "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Sprintf("%q is not a Kubernetes object name: %s. Write the name as kubectl get %s lists it.", name, strings.Join(errs, "; "), kind)
	}
	return ""
}

func (l *loader) registry(b *hcl.Block, dir string) hcl.Diagnostics {
	r := &Registry{Host: b.Labels[0], DeclRange: b.DefRange}
	content, diags := b.Body.Content(registrySchema)
	if reg, err := name.NewRegistry(r.Host); err != nil || strings.Contains(r.Host, "/") {
		diags = append(diags, errorf(b.LabelRanges[0], "Invalid registry host", "%q is not a registry host. Write the host as it appears in image names, such as \"ghcr.io\" or \"registry.example.org:5000\".", r.Host))
	} else {
		r.Host = reg.RegistryStr()
	}
	if prev, ok := l.regs[r.Host]; ok {
		diags = append(diags, errorf(b.LabelRanges[0], "Duplicate registry", "Registry %q is already configured at %s. Merge the two blocks.", r.Host, prev.DeclRange))
	} else {
		l.regs[r.Host] = r
		l.c.Registries = append(l.c.Registries, r)
	}
	var mirror string
	diags = append(diags, str(content.Attributes["mirror"], &mirror)...)
	diags = append(diags, boolean(content.Attributes["insecure"], &r.Insecure)...)
	diags = append(diags, strList(content.Attributes["token_hosts"], &r.TokenHosts)...)
	for _, h := range r.TokenHosts {
		if _, err := name.NewRegistry(h, name.StrictValidation); err != nil || strings.ContainsAny(h, "/@?#") || h == "" {
			diags = append(diags, errorf(content.Attributes["token_hosts"].Expr.Range(), "Invalid token host", "%q is not a host. Write the token server's host (or host:port) alone, such as \"authn.nvidia.com\": it is asked over https.", h))
		}
	}
	if mirror != "" {
		if IsLayoutPath(mirror) {
			if !filepath.IsAbs(mirror) {
				mirror = filepath.Join(dir, mirror)
			}
			r.MirrorLayout = mirror
		} else {
			r.MirrorHost = mirror
		}
	}
	return diags
}

// IsLayoutPath tells a mirror that is a folder from one that is a registry
// host, the way Docker tells a registry host from a path: a folder starts
// with "/", "./" or "../", or its first segment has no "." or ":" and is not
// "localhost".
func IsLayoutPath(s string) bool {
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || s == "." {
		return true
	}
	first, _, _ := strings.Cut(s, "/")
	return !strings.ContainsAny(first, ".:") && first != "localhost"
}

var policyWords = func() string {
	q := make([]string, len(Policies))
	for i, p := range Policies {
		q[i] = fmt.Sprintf("%q", p)
	}
	return strings.Join(q, ", ")
}()

func (l *loader) module(b *hcl.Block) hcl.Diagnostics {
	m := &Module{Name: b.Labels[0], DeclRange: b.DefRange, AttrRanges: map[string]hcl.Range{}}
	content, diags := b.Body.Content(moduleSchema)
	if prev, ok := l.mods[m.Name]; ok {
		diags = append(diags, errorf(b.LabelRanges[0], "Duplicate module", "A module named %q is already defined at %s. Give each module a unique name.", m.Name, prev.DeclRange))
	} else {
		l.mods[m.Name] = m
		l.c.Modules = append(l.c.Modules, m)
	}
	a := content.Attributes
	for k, attr := range a {
		m.AttrRanges[k] = attr.Expr.Range()
	}

	var img, policy, scheme, tagsRe string
	diags = append(diags, str(a["image"], &img)...)
	diags = append(diags, str(a["policy"], &policy)...)
	diags = append(diags, str(a["pin"], &m.Pin.Text)...)
	diags = append(diags, str(a["tag"], &m.Tag)...)
	diags = append(diags, str(a["constraint"], &m.ConstraintText)...)
	diags = append(diags, str(a["tags"], &tagsRe)...)
	diags = append(diags, str(a["versioning"], &scheme)...)
	diags = append(diags, boolean(a["prerelease"], &m.Prerelease)...)
	diags = append(diags, boolean(a["any_variant"], &m.AnyVariant)...)
	diags = append(diags, strList(a["platforms"], &m.Platforms)...)
	diags = append(diags, str(a["allow_downgrade"], &m.AllowDowngrade)...)
	diags = append(diags, boolean(a["one_way"], &m.OneWay)...)
	diags = append(diags, str(a["restore"], &m.Restore)...)

	if attr := a["image"]; attr != nil && img != "" {
		repo, err := name.NewRepository(img)
		switch {
		case strings.ContainsAny(img, "@") || hasTag(img):
			diags = append(diags, errorf(attr.Expr.Range(), "Image names a tag or digest", "image is the repository only, such as %q. Write the tag or digest in pin.", repoPart(img)))
		case err != nil:
			diags = append(diags, errorf(attr.Expr.Range(), "Invalid image reference", "%q is not a repository name (%v). Write a name such as \"registry.example.org/team/service\".", img, err))
		default:
			m.Image = repo.Name()
		}
	}
	if attr := a["policy"]; attr != nil && policy != "" {
		m.Policy = Policy(policy)
		valid := false
		for _, p := range Policies {
			valid = valid || p == m.Policy
		}
		if !valid {
			diags = append(diags, errorf(attr.Expr.Range(), "Unknown policy", "%q is not a policy. Write one of %s.", policy, policyWords))
		}
	}
	if attr := a["pin"]; attr != nil {
		pin, msg := ParsePin(m.Pin.Text)
		if msg != "" {
			diags = append(diags, errorf(attr.Expr.Range(), "Invalid pin", "%s", msg))
		} else {
			m.Pin = pin
		}
	}
	if m.Policy == Exact && a["pin"] == nil {
		diags = append(diags, errorf(b.DefRange, "Missing pin", "Module %q has policy \"exact\", which locks exactly the pin. Add pin = \"<tag>@sha256:<digest>\", or choose policy \"at-least-running\" or \"track-upstream\".", m.Name))
	}
	if attr := a["constraint"]; attr != nil && m.ConstraintText != "" {
		c, err := semver.NewConstraint(m.ConstraintText)
		if err != nil {
			diags = append(diags, errorf(attr.Expr.Range(), "Invalid semver constraint", "%q is not a semver range (%v). Write a range such as \">= 1.27, < 2\" or \"~6.10\".", m.ConstraintText, err))
		} else {
			m.Constraint = c
		}
	}
	if attr := a["tags"]; attr != nil {
		re, err := regexp.Compile(tagsRe)
		if err != nil {
			diags = append(diags, errorf(attr.Expr.Range(), "Invalid regular expression", "tags must be a Go regular expression (%v). Write one such as \"^1\\\\.27\\\\.\".", err))
		} else {
			m.Tags = re
		}
	}
	if attr := a["versioning"]; attr != nil {
		s, err := version.ParseScheme(scheme)
		if err != nil {
			diags = append(diags, errorf(attr.Expr.Range(), "Invalid versioning", "%v. Write \"semver\", \"calver\", \"numeric\" or \"regex:<expression with (?P<version>…)>\".", err))
		} else {
			m.Versioning = s
		}
	}
	if attr := a["allow_downgrade"]; attr != nil && strings.TrimSpace(m.AllowDowngrade) == "" {
		diags = append(diags, errorf(attr.Expr.Range(), "Empty downgrade reason", "allow_downgrade takes the reason the downgrade is wanted, in words, and the reason goes into the lock. Write it, or remove allow_downgrade."))
	}
	if attr := a["restore"]; attr != nil && strings.TrimSpace(m.Restore) == "" {
		diags = append(diags, errorf(attr.Expr.Range(), "Empty restore", "restore names the backup a downgrade restores from. Write it, such as \"snapshot forge-db 2026-09-16\", or remove restore."))
	}
	if m.OneWay && m.AllowDowngrade != "" && strings.TrimSpace(m.Restore) == "" {
		diags = append(diags, errorf(a["allow_downgrade"].Range, "Downgrade of a one-way service without a restore", "Module %q is one_way: its upgrades migrate data, so going back is a restore, not an undo. Add restore = \"<the backup the downgrade restores from>\".", m.Name))
	}
	if m.Tag != "" && m.ConstraintText != "" {
		diags = append(diags, errorf(a["constraint"].Range, "Floating tag with a constraint", "Module %q follows the floating tag %q, so a version range does not apply. Remove constraint, or remove tag to pick among versioned tags.", m.Name, m.Tag))
	}
	if m.Policy != TrackUpstream && m.Policy != "" {
		for _, k := range []string{"tag", "constraint", "tags", "prerelease"} {
			if attr := a[k]; attr != nil {
				diags = append(diags, warnf(attr.Range, "Ignored argument", "%s only applies to policy \"track-upstream\"; module %q has policy %q. Remove it, or change the policy.", k, m.Name, m.Policy))
			}
		}
	}
	if m.Policy == AtLeastRunning && a["pin"] == nil && len(content.Blocks) == 0 {
		diags = append(diags, errorf(b.DefRange, "Nothing to lock", "Module %q has policy \"at-least-running\" but neither a pin nor a runs_on block. Add pin = \"<tag>@sha256:<digest>\" or runs_on \"<host>\" { container = \"<name>\" }.", m.Name))
	}
	for _, p := range m.Platforms {
		if _, err := v1.ParsePlatform(p); err != nil || !strings.Contains(p, "/") {
			diags = append(diags, errorf(a["platforms"].Expr.Range(), "Invalid platform", "%q is not a platform. Write os/arch[/variant], such as \"linux/amd64\" or \"linux/arm64/v8\".", p))
		}
	}

	for _, rb := range content.Blocks {
		ro := RunsOn{Host: rb.Labels[0], DeclRange: rb.LabelRanges[0]}
		rc, d := rb.Body.Content(runsOnSchema)
		diags = append(diags, d...)
		diags = append(diags, str(rc.Attributes["container"], &ro.Container)...)
		diags = append(diags, str(rc.Attributes["workload"], &ro.Workload)...)
		diags = append(diags, str(rc.Attributes["selector"], &ro.SelectorText)...)
		if attr := rc.Attributes["workload"]; attr != nil && ro.Workload != "" {
			if msg := parseWorkload(ro.Workload); msg != "" {
				diags = append(diags, errorf(attr.Expr.Range(), "Invalid workload", "%s", msg))
			}
		}
		if attr := rc.Attributes["selector"]; attr != nil {
			sel, msg := parseSelector(ro.SelectorText)
			if msg != "" {
				diags = append(diags, errorf(attr.Expr.Range(), "Invalid label selector", "%s", msg))
			}
			ro.Selector = sel
		}
		if w, s := rc.Attributes["workload"], rc.Attributes["selector"]; w != nil && s != nil {
			diags = append(diags, errorf(s.Range, "Conflicting runs_on targets", "runs_on %q names both a workload and a selector. Keep workload to take over what one controller owns, or selector to take over pods by their labels.", ro.Host))
		}
		m.RunsOn = append(m.RunsOn, ro)
	}
	return diags
}

// crossCheck checks what spans blocks: runs_on naming a defined host.
func (l *loader) crossCheck() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, m := range l.c.Modules {
		for _, ro := range m.RunsOn {
			h, ok := l.hosts[ro.Host]
			if !ok {
				diags = append(diags, errorf(ro.DeclRange, "Undefined host", "Module %q runs on %q, but no host block defines it. Add host %q { docker = \"unix:///var/run/docker.sock\" } or { snapshot = \"<file>\" }, or fix the name.%s", m.Name, ro.Host, ro.Host, suggest(ro.Host, l.hosts)))
				continue
			}
			// A snapshot may have been taken of a cluster: only a live
			// Docker host cannot have workloads.
			if (ro.Workload != "" || ro.SelectorText != "") && h.Kubernetes == nil && h.Snapshot == "" {
				diags = append(diags, errorf(ro.DeclRange, "Workload on a Docker host", "Module %q takes over a workload or selector on %q, which is a Docker host. Write container = \"<name>\" for a Docker host, or make %q a Kubernetes host with kubernetes = { context = \"…\", namespace = \"…\" }.", m.Name, ro.Host, ro.Host))
			}
		}
	}
	return diags
}

func suggest(s string, hosts map[string]*Host) string {
	names := make([]string, 0, len(hosts))
	for n := range hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf(" Defined hosts: %s.", strings.Join(names, ", "))
}

// tagRe is the distribution spec's tag grammar.
var tagRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// ParsePin reads a pin: "tag", "@sha256:…", "sha256:…" or "tag@sha256:…".
// It returns a message saying what to write instead when the pin is invalid.
func ParsePin(s string) (Pin, string) {
	p := Pin{Text: s}
	tag, digest, hasDigest := strings.Cut(s, "@")
	if !hasDigest && strings.HasPrefix(s, "sha256:") {
		tag, digest, hasDigest = "", s, true
	}
	if tag != "" {
		if !tagRe.MatchString(tag) {
			return p, fmt.Sprintf("%q is not a valid tag. A tag has up to 128 letters, digits, '_', '.' and '-', and does not start with '.' or '-'. Write pin = \"<tag>\", \"<tag>@sha256:<digest>\" or \"sha256:<digest>\".", tag)
		}
		p.Tag = tag
	}
	if hasDigest {
		h, err := v1.NewHash(digest)
		if err != nil || h.Algorithm != "sha256" {
			return p, fmt.Sprintf("%q is not a valid digest. Write sha256: followed by 64 lowercase hex digits, as `crane digest` or `docker buildx imagetools inspect` print it.", digest)
		}
		p.Digest = h.String()
	}
	if p.Tag == "" && p.Digest == "" {
		return p, "The pin is empty. Write pin = \"<tag>\", \"<tag>@sha256:<digest>\" or \"sha256:<digest>\"."
	}
	return p, ""
}

// hasTag reports whether an image reference carries a ":tag" after its last
// slash (a registry port before the slash is not a tag).
func hasTag(s string) bool {
	i := strings.LastIndex(s, "/")
	return strings.Contains(s[i+1:], ":")
}

func repoPart(s string) string {
	s, _, _ = strings.Cut(s, "@")
	if hasTag(s) {
		s = s[:strings.LastIndex(s, ":")]
	}
	return s
}

// str, boolean and strList read an optional attribute's value into dst.
func str(a *hcl.Attribute, dst *string) hcl.Diagnostics {
	v, diags := value(a, cty.String)
	if v != cty.NilVal {
		*dst = v.AsString()
	}
	return diags
}

func boolean(a *hcl.Attribute, dst *bool) hcl.Diagnostics {
	v, diags := value(a, cty.Bool)
	if v != cty.NilVal {
		*dst = v.True()
	}
	return diags
}

func strList(a *hcl.Attribute, dst *[]string) hcl.Diagnostics {
	v, diags := value(a, cty.List(cty.String))
	if v != cty.NilVal {
		for _, e := range v.AsValueSlice() {
			if e.IsNull() {
				continue
			}
			*dst = append(*dst, e.AsString())
		}
	}
	return diags
}

func value(a *hcl.Attribute, ty cty.Type) (cty.Value, hcl.Diagnostics) {
	if a == nil {
		return cty.NilVal, nil
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	cv, err := convert.Convert(v, ty)
	if err != nil || cv.IsNull() || !cv.IsWhollyKnown() {
		return cty.NilVal, hcl.Diagnostics{errorf(a.Expr.Range(), "Invalid value", "%s must be %s. Write it as a literal, such as %s.", a.Name, ty.FriendlyName(), example(ty))}
	}
	return cv, nil
}

func example(ty cty.Type) string {
	switch {
	case ty == cty.Bool:
		return "true"
	case ty.IsListType():
		return `["linux/amd64"]`
	}
	return `"text"`
}
