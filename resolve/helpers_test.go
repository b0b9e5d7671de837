package resolve

import (
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/order"
)

func compare(a, b image.Image, o order.Options) string { return order.Compare(a, b, o).Cmp.String() }
