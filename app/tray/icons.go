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

// Icons are the tray icon of each Health, as PNG (and ICO for Windows):
// Switchboard's mark (the dashboard's: a rounded blue plate with two
// white jacks joined by a cord) with the state as a badge at its lower
// right. The badges differ in shape, not only in colour, so that they read
// in a monochrome menu bar and for colour-blind users: a filled disc with a
// check (well), a ring (starting), a triangle with an exclamation mark
// (failing). A transparent gap parts the badge from the mark.
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
	// accent is the dashboard's --accent (light theme).
	accent = color.NRGBA{0x2f, 0x5f, 0xd0, 0xff}
	green  = color.NRGBA{0x1f, 0x88, 0x3d, 0xff}
	amber  = color.NRGBA{0xbf, 0x87, 0x00, 0xff}
	red    = color.NRGBA{0xcf, 0x22, 0x2e, 0xff}
	white  = color.NRGBA{0xff, 0xff, 0xff, 0xff}
)

// The badge: a disc at the lower right, in unit coordinates, and the gap
// cut around it.
const (
	badgeX, badgeY, badgeR = 0.75, 0.75, 0.25
	badgeGap               = 0.05
)

// DrawIcon draws the icon of h, size x size pixels, with 4x4 supersampling
// for smooth edges.
func DrawIcon(h Health, size int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	s := float64(size)
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			// Average the samples' colours, weighted by their alpha.
			var r, g, b, a float64
			for sy := 0; sy < 4; sy++ {
				for sx := 0; sx < 4; sx++ {
					px := (float64(x) + (float64(sx)+0.5)/4) / s // 0..1
					py := (float64(y) + (float64(sy)+0.5)/4) / s
					c, ok := sample(h, px, py)
					if !ok {
						continue
					}
					r, g, b, a = r+float64(c.R), g+float64(c.G), b+float64(c.B), a+1
				}
			}
			if a == 0 {
				continue
			}
			img.SetNRGBA(x, y, color.NRGBA{uint8(r / a), uint8(g / a), uint8(b / a), uint8(255 * a / 16)})
		}
	}
	return img
}

// sample is the colour of the icon of h at (x, y) in the unit square;
// ok is false where it is transparent.
func sample(h Health, x, y float64) (c color.NRGBA, ok bool) {
	d := math.Hypot(x-badgeX, y-badgeY)
	if d <= badgeR+badgeGap {
		if d > badgeR {
			return c, false // the gap between badge and mark
		}
		// The badge's own square, mapped onto the unit square.
		bx := (x-badgeX)/(2*badgeR) + 0.5
		by := (y-badgeY)/(2*badgeR) + 0.5
		in, mark := badge(h, bx, by)
		switch {
		case !in:
			return c, false
		case mark:
			return white, true
		case h == Well:
			return green, true
		case h == Starting:
			return amber, true
		default:
			return red, true
		}
	}
	in, mark := plate(x, y)
	switch {
	case !in:
		return c, false
	case mark:
		return white, true
	default:
		return accent, true
	}
}

// plate is the mark as the dashboard's SVG draws it on 24x24: a rounded
// rectangle (2,4)–(22,20) with corner radius 4, two jacks of radius 2.2
// at (8,12) and (16,12), a cord between them 1.8 wide. Here it fills the
// icon's width (the tray gives an icon a square), and the jacks sit
// higher, where the badge leaves them whole.
func plate(x, y float64) (in, mark bool) {
	// The SVG's coordinates, scaled so that the plate spans 1..23.
	u := 1 + x*22
	v := 3 + y*18
	const left, top, right, bottom, rad = 1, 4, 23, 20, 4
	if u < left || u > right || v < top || v > bottom {
		return false, false
	}
	cx := math.Max(left+rad, math.Min(right-rad, u))
	cy := math.Max(top+rad, math.Min(bottom-rad, v))
	if math.Hypot(u-cx, v-cy) > rad {
		return false, false
	}
	// The jacks sit higher than the SVG's, clear of the badge.
	jack := math.Hypot(u-7, v-9.2) < 2.4 || math.Hypot(u-17, v-9.2) < 2.4
	cord := u > 9 && u < 15 && math.Abs(v-9.2) < 1.0
	return true, jack || cord
}

// badge says whether the point (x, y) in the badge's unit square is inside
// the badge of h, and whether it is on its inner (white) mark.
func badge(h Health, x, y float64) (in, mark bool) {
	dx, dy := x-0.5, y-0.5
	r := math.Hypot(dx, dy)
	switch h {
	case Well:
		// A filled disc with a white check mark.
		if r > 0.5 {
			return false, false
		}
		return true, onCheck(x, y)
	case Starting:
		// A ring with a gap at the top right: "in progress".
		if r > 0.5 || r < 0.24 {
			return false, false
		}
		a := math.Atan2(-dy, dx) // 0 = right, counter-clockwise
		if a > 0.15 && a < 1.2 {
			return false, false
		}
		return true, false
	default:
		// An upward triangle with a white exclamation mark.
		const top, bottom = 0.02, 0.96
		if y < top || y > bottom {
			return false, false
		}
		half := 0.52 * (y - top) / (bottom - top)
		if math.Abs(dx) > half {
			return false, false
		}
		bar := math.Abs(dx) < 0.08 && y > 0.32 && y < 0.66
		dot := math.Hypot(dx, y-0.80) < 0.085
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
	const w = 0.08
	return seg(0.26, 0.52, 0.43, 0.69) < w || seg(0.43, 0.69, 0.75, 0.34) < w
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
