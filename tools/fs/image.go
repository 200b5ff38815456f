package fs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"image"
	_ "image/gif" // GIF decoding for image.Decode
	"image/jpeg"
	"image/png"
	"io/fs"
	"os"

	xdraw "golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // WebP decoding for image.Decode

	"github.com/agent-mcp/agent-mcp/tools"
)

// Read's limits for images. A returned image fits what the hosts accept:
// the Anthropic API refuses an image over 5 MB of base64 (3.75 MiB of
// bytes) and, in a request with many images, one over 2000 px on a side;
// OpenAI scales anything over 2048 px down. Larger images are scaled down
// before they are returned.
const (
	// ImageMaxSide is the longest side, in pixels, of an image Read
	// returns.
	ImageMaxSide = 2000
	// ImageMaxBytes is the largest encoded image Read returns.
	ImageMaxBytes = 3 << 20 * 5 / 4 // 3.75 MiB: 5 MiB as base64
	// imageMaxFileBytes is the largest image file Read decodes.
	imageMaxFileBytes = 64 << 20
	// imageMaxPixels is the largest image, in pixels, Read decodes (a
	// small file can claim a huge canvas: 64 megapixels take 256 MB).
	imageMaxPixels = 64 << 20
	// jpegQuality is the quality of a scaled-down image encoded as JPEG.
	jpegQuality = 85
)

var imageTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp",
}

// formatTypes maps image.DecodeConfig's format names to MIME types.
var formatTypes = map[string]string{"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}

// ImageDimensions are an image's size as found and as returned.
type ImageDimensions struct {
	OriginalWidth  int `json:"originalWidth"`
	OriginalHeight int `json:"originalHeight"`
	DisplayWidth   int `json:"displayWidth"`
	DisplayHeight  int `json:"displayHeight"`
}

// readImage returns the image file f (abs is its path) inline, scaled
// down when it is larger than a host takes. The MIME type is the one the
// content has (a host refuses an image whose declared type is wrong).
func readImage(ctx context.Context, f *os.File, abs, mime string, info fs.FileInfo, uc *tools.UseContext) (*tools.Result, error) {
	if info.Size() > imageMaxFileBytes {
		return nil, fmt.Errorf("cannot read %s: the image is %s, more than the %s Read decodes", abs, tools.FormatSize(info.Size()), tools.FormatSize(imageMaxFileBytes))
	}
	data, err := readAll(f, info.Size())
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", abs, err)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: it is not a valid %s image (%v)", abs, mime[len("image/"):], err)
	}
	mime = formatTypes[format]
	uc.Session.RecordFile(abs, tools.FileState{Fingerprint: sha256.Sum256(data), ModTime: info.ModTime(), Size: info.Size()})
	dims := &ImageDimensions{cfg.Width, cfg.Height, cfg.Width, cfg.Height}
	res := &tools.Result{}
	if cfg.Width > ImageMaxSide || cfg.Height > ImageMaxSide || len(data) > ImageMaxBytes {
		if cfg.Width*cfg.Height > imageMaxPixels || cfg.Width > 1<<16 || cfg.Height > 1<<16 {
			return nil, fmt.Errorf("cannot read %s: the image is %dx%d px, more than the %d megapixels Read decodes to scale it down",
				abs, cfg.Width, cfg.Height, imageMaxPixels>>20)
		}
		img, _, err := image.Decode(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: it is not a valid %s image (%v)", abs, format, err)
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		small, smallMime, err := downscale(img, format)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: scaling the image down: %w", abs, err)
		}
		b, _, _ := image.DecodeConfig(bytes.NewReader(small))
		dims.DisplayWidth, dims.DisplayHeight = b.Width, b.Height
		res.Text = fmt.Sprintf("The image was scaled down from %dx%d px (%s) to %dx%d px (%s, %s) to fit what hosts accept (%d px on the longer side, %s).",
			cfg.Width, cfg.Height, tools.FormatSize(int64(len(data))), b.Width, b.Height, smallMime, tools.FormatSize(int64(len(small))),
			ImageMaxSide, tools.FormatSize(ImageMaxBytes))
		if format == "gif" {
			res.Text += " Only the first frame of a GIF is shown."
		}
		data, mime = small, smallMime
	}
	res.Output = ReadOutput{Type: "image", File: ReadFileInfo{FilePath: abs, MIMEType: mime, Size: info.Size(), Dimensions: dims}}
	res.Extra = []tools.Content{{Kind: tools.ImageContent, MIMEType: mime, Data: data}}
	return res, nil
}

// downscale scales img to at most ImageMaxSide on its longer side and
// encodes it in at most ImageMaxBytes: a JPEG stays JPEG, anything else
// becomes PNG, or JPEG when the PNG is too large and the image is opaque;
// while it is still too large, the image shrinks by a quarter.
func downscale(img image.Image, format string) ([]byte, string, error) {
	b := img.Bounds()
	scale := min(1, float64(ImageMaxSide)/float64(max(b.Dx(), b.Dy())))
	opaque := isOpaque(img)
	for {
		w, h := max(int(float64(b.Dx())*scale+0.5), 1), max(int(float64(b.Dy())*scale+0.5), 1)
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		if scale == 1 {
			// Too many bytes at a size that fits: re-encoded as it is first.
			xdraw.Draw(dst, dst.Bounds(), img, b.Min, xdraw.Src)
		} else {
			xdraw.CatmullRom.Scale(dst, dst.Bounds(), img, b, xdraw.Src, nil)
		}
		var out bytes.Buffer
		mime := "image/png"
		if format == "jpeg" {
			mime = "image/jpeg"
			if err := jpeg.Encode(&out, dst, &jpeg.Options{Quality: jpegQuality}); err != nil {
				return nil, "", err
			}
		} else if err := png.Encode(&out, dst); err != nil {
			return nil, "", err
		}
		if out.Len() > ImageMaxBytes && mime == "image/png" && opaque {
			out.Reset()
			mime = "image/jpeg"
			if err := jpeg.Encode(&out, dst, &jpeg.Options{Quality: jpegQuality}); err != nil {
				return nil, "", err
			}
		}
		if out.Len() <= ImageMaxBytes || w == 1 && h == 1 {
			return out.Bytes(), mime, nil
		}
		scale *= 0.75
	}
}

// isOpaque reports whether img has no transparent pixel.
func isOpaque(img image.Image) bool {
	if o, ok := img.(interface{ Opaque() bool }); ok {
		return o.Opaque()
	}
	return false
}
