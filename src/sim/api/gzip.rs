//! Response compression as kube-apiserver does it (`APIResponseCompression`,
//! on by default since 1.16): a list response larger than 128 KB is sent
//! gzip-compressed to a client whose `Accept-Encoding` allows gzip; small
//! responses and watch streams never are. Compression runs chunk by chunk
//! as the list streams, at the fastest level (as upstream's writer).

use std::io::Write as _;

use bytes::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;
use http::{HeaderMap, HeaderValue, Response, header};

/// Responses larger than this are compressed (upstream's threshold).
pub const COMPRESS_ABOVE_BYTES: usize = 128 * 1024;

/// Whether the request's `Accept-Encoding` allows gzip (`gzip;q=0` refuses it).
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or_default();
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

/// Marks `response` as gzip-encoded.
pub fn mark<B>(response: &mut Response<B>) {
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    headers.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
}

/// `body` compressed whole.
pub fn compress(body: &[u8]) -> Bytes {
    let mut encoder = GzEncoder::new(Vec::with_capacity(body.len() / 4), Compression::fast());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(body);
    Bytes::from(encoder.finish().unwrap_or_default())
}

/// The chunks of a streamed body, compressed as they come: each chunk
/// yields what the encoder has produced so far, the last one its tail.
pub struct Gzipped<I> {
    chunks: I,
    encoder: Option<GzEncoder<Vec<u8>>>,
}

impl<I> Gzipped<I> {
    /// Compresses `chunks`.
    pub fn new(chunks: I) -> Self {
        Gzipped {
            chunks,
            encoder: Some(GzEncoder::new(Vec::new(), Compression::fast())),
        }
    }
}

impl<I: Iterator<Item = Bytes>> Iterator for Gzipped<I> {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        loop {
            let encoder = self.encoder.as_mut()?;
            let Some(chunk) = self.chunks.next() else {
                let tail = self.encoder.take()?.finish().unwrap_or_default();
                return Some(Bytes::from(tail));
            };
            let _ = encoder.write_all(&chunk);
            let produced = std::mem::take(encoder.get_mut());
            if !produced.is_empty() {
                return Some(Bytes::from(produced));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use super::*;

    fn accepts(value: &str) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_str(value).unwrap(),
        );
        accepts_gzip(&headers)
    }

    #[test]
    fn accept_encoding_is_read_as_http_says() {
        assert!(accepts("gzip"));
        assert!(accepts("deflate, GZIP;q=0.5"));
        assert!(accepts("*"));
        assert!(!accepts("gzip;q=0"));
        assert!(!accepts("identity"));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn streamed_chunks_decompress_to_the_original() {
        let chunks: Vec<Bytes> = (0..50)
            .map(|i| {
                Bytes::from(format!(
                    "{{\"item\":{i},\"pad\":\"{}\"}},",
                    "x".repeat(i * 100)
                ))
            })
            .collect();
        let original: Vec<u8> = chunks.iter().flat_map(|c| c.to_vec()).collect();
        let compressed: Vec<u8> = Gzipped::new(chunks.into_iter())
            .flat_map(|c| c.to_vec())
            .collect();
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(compressed.as_slice())
            .read_to_end(&mut decoded)
            .unwrap();
        assert_eq!(decoded, original);
        assert!(
            compressed.len() < original.len() / 5,
            "{} of {}",
            compressed.len(),
            original.len()
        );
        let mut whole = Vec::new();
        flate2::read::GzDecoder::new(compress(&original).as_ref())
            .read_to_end(&mut whole)
            .unwrap();
        assert_eq!(whole, original);
    }
}
