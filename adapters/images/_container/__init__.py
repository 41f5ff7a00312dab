"""What an image's bytes hold, read without decoding a pixel.

`base64_text` turns a tool's base64 into bytes without holding the GIL for long; `structure`
(with `png_walk`, `jpeg_walk` and the `found` values they share) walks each container to where
the image ends and names what it carries besides the pixels;
`strip` removes that metadata whole; `repair` drops what every PNG decoder drops; `filled`
tells whether decoded pixel data fill the size the header declares; `passthrough` decides
whether the bytes may be sent as they are, checking them structurally where that suffices.
Nothing is imported here: `passthrough` needs the decoder, which needs `structure`.
"""
