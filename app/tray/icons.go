package tray

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
)

// IconSize is the side of the tray icons in pixels; tray hosts scale it.
const IconSize = 32

// Icons are the tray icon of each Health, as PNG (and ICO for Windows).
// The three differ in shape, not only in colour, so that they read in a
// monochrome menu bar and for colour-blind users: a filled disc (well), a
// ring (starting), a triangle with an exclamation mark (failing).
type Icons struct {
	PNG map[Health][]byte
	ICO map[Health][]byte
}

// MakeIcons draws the icons.
func MakeIcons() (Icons, error) {
	ic := Icons{PNG: map[Health][]byte{}, ICO: map[Health][]byte{}}
	for _, h := range []Health{Well, Starting, Failing} {
		img := DrawIcon(h, IconSize)
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			return Icons{}, fmt.Errorf("encoding the %s icon: %w", h, err)
		}
		ic.PNG[h] = buf.Bytes()
		ic.ICO[h] = pngToICO(buf.Bytes(), IconSize)
	}
	return ic, nil
}

var (
	green = color.NRGBA{0x1f, 0x88, 0x3d, 0xff}
	amber = color.NRGBA{0xbf, 0x87, 0x00, 0xff}
	red   = color.NRGBA{0xcf, 0x22, 0x2e, 0xff}
	white = color.NRGBA{0xff, 0xff, 0xff, 0xff}
)

// DrawIcon draws the icon of h, size x size pixels, with 4x4 supersampling
// for smooth edges.
func DrawIcon(h Health, size int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	s := float64(size)
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			var fg color.NRGBA
			cover, inner := 0, 0
			for sy := 0; sy < 4; sy++ {
				for sx := 0; sx < 4; sx++ {
					px := (float64(x) + (float64(sx)+0.5)/4) / s // 0..1
					py := (float64(y) + (float64(sy)+0.5)/4) / s
					in, mark := shape(h, px, py)
					if in {
						cover++
						if mark {
							inner++
						}
					}
				}
			}
			if cover == 0 {
				continue
			}
			switch h {
			case Well:
				fg = green
			case Starting:
				fg = amber
			default:
				fg = red
			}
			// Blend the mark (white) into the shape's colour by coverage.
			if inner > 0 {
				t := float64(inner) / float64(cover)
				fg.R = uint8(float64(fg.R)*(1-t) + float64(white.R)*t)
				fg.G = uint8(float64(fg.G)*(1-t) + float64(white.G)*t)
				fg.B = uint8(float64(fg.B)*(1-t) + float64(white.B)*t)
			}
			fg.A = uint8(255 * cover / 16)
			img.SetNRGBA(x, y, fg)
		}
	}
	return img
}

// shape says whether the point (x, y) in the unit square is inside the
// icon of h, and whether it is on its inner (white) mark.
func shape(h Health, x, y float64) (in, mark bool) {
	dx, dy := x-0.5, y-0.5
	r := math.Hypot(dx, dy)
	switch h {
	case Well:
		// A filled disc with a white check mark.
		if r > 0.44 {
			return false, false
		}
		return true, onCheck(x, y)
	case Starting:
		// A ring with a gap at the top right: "in progress".
		if r > 0.44 || r < 0.26 {
			return false, false
		}
		a := math.Atan2(-dy, dx) // 0 = right, counter-clockwise
		if a > 0.15 && a < 1.2 {
			return false, false
		}
		return true, false
	default:
		// An upward triangle with a white exclamation mark.
		const top, bottom = 0.06, 0.92
		if y < top || y > bottom {
			return false, false
		}
		half := 0.46 * (y - top) / (bottom - top)
		if math.Abs(dx) > half {
			return false, false
		}
		bar := math.Abs(dx) < 0.055 && y > 0.32 && y < 0.66
		dot := math.Hypot(dx, y-0.78) < 0.065
		return true, bar || dot
	}
}

// onCheck reports whether (x, y) lies on the check mark's two strokes.
func onCheck(x, y float64) bool {
	seg := func(ax, ay, bx, by float64) float64 {
		vx, vy := bx-ax, by-ay
		t := ((x-ax)*vx + (y-ay)*vy) / (vx*vx + vy*vy)
		t = math.Max(0, math.Min(1, t))
		return math.Hypot(x-(ax+t*vx), y-(ay+t*vy))
	}
	const w = 0.055
	return seg(0.28, 0.52, 0.43, 0.67) < w || seg(0.43, 0.67, 0.72, 0.36) < w
}

// pngToICO wraps a PNG in an ICO container (one image), which Windows'
// tray takes and which has held PNG data since Windows Vista.
func pngToICO(p []byte, size int) []byte {
	var buf bytes.Buffer
	dim := byte(size)
	if size >= 256 {
		dim = 0
	}
	binary.Write(&buf, binary.LittleEndian, [3]uint16{0, 1, 1}) // reserved, type icon, one image
	buf.Write([]byte{dim, dim, 0, 0})                           // width, height, palette, reserved
	binary.Write(&buf, binary.LittleEndian, [2]uint16{1, 32})   // planes, bits per pixel
	binary.Write(&buf, binary.LittleEndian, [2]uint32{uint32(len(p)), 6 + 16})
	buf.Write(p)
	return buf.Bytes()
}
