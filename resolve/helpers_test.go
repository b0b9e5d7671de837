package resolve

import (
	"github.com/pin-tool/pin/image"
	"github.com/pin-tool/pin/order"
)

func compare(a, b image.Image, o order.Options) string { return order.Compare(a, b, o).Cmp.String() }
