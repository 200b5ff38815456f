package fs_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/agent-mcp/agent-mcp/tools"
	"github.com/agent-mcp/agent-mcp/tools/fs"
)

// gradient is an opaque w x h image that compresses well.
func gradient(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetRGBA(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), 128, 255})
		}
	}
	return img
}

// noise is a w x h image that compresses badly; alpha < 255 makes it
// translucent.
func noise(w, h int, alpha uint8) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < len(img.Pix); i += 4 {
		v := r.Uint32()
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(v), uint8(v>>8), uint8(v>>16), alpha
	}
	return img
}

func encodePNG(t *testing.T, img image.Image) string {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// encodeRawPNG is a PNG of img stored without compression: for noise,
// which does not compress, it is as large and much cheaper to make.
func encodeRawPNG(t *testing.T, img image.Image) string {
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func encodeJPEG(t *testing.T, img image.Image) string {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// pngHeader is the start of a PNG that claims a w x h canvas.
func pngHeader(w, h uint32) string {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	chunk := append([]byte("IHDR"), ihdr...)
	out := append([]byte("\x89PNG\r\n\x1a\n"), binary.BigEndian.AppendUint32(nil, 13)...)
	out = append(out, chunk...)
	return string(binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(chunk)))
}

func TestReadImage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	small := encodePNG(t, gradient(300, 200))

	// Each case makes its own file, so the cases (and the costly images)
	// are made and read in parallel.
	cases := []struct {
		file         string
		content      func(t *testing.T) string
		mime         string
		w, h         int // as returned
		origW, origH int
		note         []string
	}{
		{"small.png", func(*testing.T) string { return small }, "image/png", 300, 200, 300, 200, nil},
		// The content's type, not the name's.
		{"photo.png", func(t *testing.T) string { return encodeJPEG(t, gradient(64, 48)) }, "image/jpeg", 64, 48, 64, 48, nil},
		{"wide.png", func(t *testing.T) string { return encodePNG(t, gradient(2400, 300)) },
			"image/png", 2000, 250, 2400, 300, []string{"scaled down from 2400x300 px", "to 2000x250 px", "2000 px"}},
		{"tall.jpg", func(t *testing.T) string { return encodeJPEG(t, gradient(100, 2400)) },
			"image/jpeg", 83, 2000, 100, 2400, []string{"100x2400", "83x2000", "image/jpeg"}},
		{"anim.gif", func(t *testing.T) string {
			var animated bytes.Buffer
			frame := image.NewPaletted(image.Rect(0, 0, 2500, 100), palette.Plan9)
			if err := gif.EncodeAll(&animated, &gif.GIF{Image: []*image.Paletted{frame, frame}, Delay: []int{10, 10}}); err != nil {
				t.Fatal(err)
			}
			return animated.String()
		}, "image/png", 2000, 80, 2500, 100, []string{"2500x100", "first frame"}},
		{"wide.webp", func(t *testing.T) string {
			webp, err := os.ReadFile("testdata/wide.webp") // 2400x120, lossless
			if err != nil {
				t.Fatal(err)
			}
			return string(webp)
		}, "image/png", 2000, 100, 2400, 120, []string{"2400x120", "2000x100"}},
		// Over the byte limit at a size within the pixel limit: an opaque
		// image becomes a JPEG, a translucent one a smaller PNG.
		{"noisy.png", func(t *testing.T) string { return encodeRawPNG(t, noise(1200, 1200, 255)) },
			"image/jpeg", 0, 0, 1200, 1200, []string{"1200x1200", "image/jpeg", "3.8MB"}},
		{"glass.png", func(t *testing.T) string { return encodeRawPNG(t, noise(1100, 1100, 200)) },
			"image/png", 0, 0, 1100, 1100, []string{"1100x1100", "image/png"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			h := h.on(t)
			content := c.content(t)
			if c.w == 0 && len(content) <= fs.ImageMaxBytes {
				t.Fatalf("the fixture is %d bytes, not over the %d the case is about", len(content), fs.ImageMaxBytes)
			}
			h.put(c.file, content)
			res := h.read(c.file)
			if len(res.Extra) != 1 || res.Extra[0].Kind != tools.ImageContent || res.Extra[0].MIMEType != c.mime {
				t.Fatalf("want one %s block, got %d blocks", c.mime, len(res.Extra))
			}
			data := res.Extra[0].Data
			if len(data) > fs.ImageMaxBytes {
				t.Errorf("image of %d bytes, over %d", len(data), fs.ImageMaxBytes)
			}
			cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
			if err != nil || "image/"+format != c.mime {
				t.Fatalf("returned image: %v, format %q", err, format)
			}
			if c.w != 0 && (cfg.Width != c.w || cfg.Height != c.h) || max(cfg.Width, cfg.Height) > fs.ImageMaxSide {
				t.Errorf("returned %dx%d, want %dx%d", cfg.Width, cfg.Height, c.w, c.h)
			}
			if c.note == nil {
				if res.Text != "" {
					t.Errorf("unexpected note %q", res.Text)
				}
				if c.file == "small.png" && string(data) != small {
					t.Error("a small image is not returned as it is")
				}
			}
			contains(t, "note", res.Text, c.note...)
			dims := outputJSON(t, res)["file"].(map[string]any)["dimensions"].(map[string]any)
			if dims["originalWidth"] != float64(c.origW) || dims["originalHeight"] != float64(c.origH) ||
				dims["displayWidth"] != float64(cfg.Width) || dims["displayHeight"] != float64(cfg.Height) {
				t.Errorf("dimensions %v", dims)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		h := h.on(t)
		h.put("broken.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
		h.put("bomb.png", pngHeader(30000, 30000))
		h.put("text.jpg", "not an image")
		h.fail("Read", map[string]any{"file_path": h.path("broken.png")}, h.path("broken.png"), "not a valid png image")
		h.fail("Read", map[string]any{"file_path": h.path("text.jpg")}, h.path("text.jpg"), "not a valid jpeg image")
		h.fail("Read", map[string]any{"file_path": h.path("bomb.png")}, h.path("bomb.png"), "30000x30000", "megapixels")
	})
}
