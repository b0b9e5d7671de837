package resolve

import (
	"time"

	"github.com/pin-tool/pin/catalogue"
	"github.com/pin-tool/pin/image"
	"github.com/pin-tool/pin/order"
)

func orderOptions(m *catalogue.Module) order.Options {
	return order.Options{Scheme: m.Versioning, AnyVariant: m.AnyVariant, Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
}

func compare(a, b image.Image, o order.Options) string { return order.Compare(a, b, o).Cmp.String() }
