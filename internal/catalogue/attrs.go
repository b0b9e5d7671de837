package catalogue

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

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
