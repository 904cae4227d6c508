//! The `bandwidth:RATE` fault: the server's sending side as one slow link.
//! Every connection's socket is wrapped in [`Paced`], which draws the bytes
//! it writes from one token bucket per server ([`Link`]), so a list, a watch
//! and the raw bytes of TLS records share the rate as they would share a
//! real link. Reads are not paced (requests are small). While no
//! `bandwidth` fault is active a write costs one read lock.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use crate::sim::fault::Faults;

/// The most one write may send at once, and the most credit an idle link
/// saves up: 10 ms of the rate, at least one TCP segment. Small enough that
/// connections sharing a slow link take turns, as packets do on a real one
/// (a large turn starved a list for seconds behind its neighbours).
fn burst(rate: u64) -> f64 {
    #[allow(clippy::cast_precision_loss, reason = "rates are far below 2^52")]
    let rate = rate as f64;
    (rate / 100.0).max(1_460.0)
}

/// One server's link: the fault plan that says the rate, and the credit.
#[derive(Debug)]
pub struct Link {
    faults: Faults,
    bucket: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    /// Bytes that may be sent now; negative after concurrent writers overdrew.
    credit: f64,
    refilled: Instant,
}

/// What a writer may do now.
enum Grant {
    /// Write freely: no cap is active.
    Unpaced,
    /// Write at most this many bytes.
    Bytes(usize),
    /// Wait this long before asking again.
    Wait(Duration),
}

impl Link {
    /// A link paced by the `bandwidth` faults of `faults`.
    pub fn new(faults: Faults) -> Arc<Link> {
        Arc::new(Link {
            faults,
            bucket: Mutex::new(Bucket {
                credit: 0.0,
                refilled: Instant::now(),
            }),
        })
    }

    fn bucket(&self) -> std::sync::MutexGuard<'_, Bucket> {
        self.bucket.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn grant(&self, wanted: usize) -> Grant {
        let Some(rate) = self.faults.bandwidth() else {
            return Grant::Unpaced;
        };
        #[allow(clippy::cast_precision_loss, reason = "rates are far below 2^52")]
        let per_second = rate as f64;
        let burst = burst(rate);
        let mut bucket = self.bucket();
        let now = Instant::now();
        let earned = now.duration_since(bucket.refilled).as_secs_f64() * per_second;
        bucket.credit = (bucket.credit + earned).min(burst);
        bucket.refilled = now;
        if bucket.credit >= 1.0 {
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "positive and at most the burst"
            )]
            let allowed = bucket.credit as usize;
            return Grant::Bytes(wanted.min(allowed).max(1));
        }
        #[allow(
            clippy::cast_precision_loss,
            reason = "a write is far below 2^52 bytes"
        )]
        let needed = (wanted as f64).min(burst) - bucket.credit;
        Grant::Wait(Duration::from_secs_f64(needed / per_second))
    }

    fn spent(&self, bytes: usize) {
        #[allow(
            clippy::cast_precision_loss,
            reason = "a write is far below 2^52 bytes"
        )]
        let bytes = bytes as f64;
        self.bucket().credit -= bytes;
    }
}

/// A socket whose writes are paced by a [`Link`].
pub struct Paced<S> {
    inner: S,
    link: Arc<Link>,
    waiting: Option<Pin<Box<Sleep>>>,
}

impl<S> Paced<S> {
    /// Wraps `inner`; its writes share `link`.
    pub fn new(inner: S, link: Arc<Link>) -> Paced<S> {
        Paced {
            inner,
            link,
            waiting: None,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Paced<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Paced<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if buf.is_empty() {
            return Pin::new(&mut self.inner).poll_write(cx, buf);
        }
        loop {
            if let Some(sleep) = self.waiting.as_mut() {
                ready!(sleep.as_mut().poll(cx));
                self.waiting = None;
            }
            match self.link.grant(buf.len()) {
                Grant::Unpaced => return Pin::new(&mut self.inner).poll_write(cx, buf),
                Grant::Bytes(allowed) => {
                    let written =
                        ready!(Pin::new(&mut self.inner).poll_write(cx, &buf[..allowed]))?;
                    self.link.spent(written);
                    return Poll::Ready(Ok(written));
                }
                Grant::Wait(wait) => self.waiting = Some(Box::pin(tokio::time::sleep(wait))),
            }
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::sim::fault;

    /// Writes `bytes` through a paced pipe while a reader drains it; returns
    /// the (virtual) time it took.
    async fn send(link: &Arc<Link>, bytes: usize) -> Duration {
        let (near, mut far) = tokio::io::duplex(64 * 1024);
        let mut paced = Paced::new(near, Arc::clone(link));
        let reader = tokio::spawn(async move {
            let mut sink = Vec::new();
            far.read_to_end(&mut sink).await.map(|_| sink.len())
        });
        let started = Instant::now();
        paced.write_all(&vec![7u8; bytes]).await.unwrap();
        paced.shutdown().await.unwrap();
        drop(paced);
        assert_eq!(reader.await.unwrap().unwrap(), bytes, "nothing lost");
        started.elapsed()
    }

    #[tokio::test(start_paused = true)]
    async fn sends_at_the_rate_while_the_fault_is_active() {
        let faults = Faults::none();
        // 8 Mbit/s: one megabyte per second.
        faults.install(fault::parse("bandwidth:8Mbit=1h").unwrap());
        let link = Link::new(faults);
        let took = send(&link, 3_000_000).await;
        assert!(
            (Duration::from_millis(2_950)..=Duration::from_millis(3_050)).contains(&took),
            "3 MB at 1 MB/s took {took:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_empty_write_passes_while_paced() {
        let faults = Faults::none();
        faults.install(fault::parse("bandwidth:8Mbit=1h").unwrap());
        let (near, _far) = tokio::io::duplex(1024);
        let mut paced = Paced::new(near, Link::new(faults));
        assert_eq!(paced.write(&[]).await.unwrap(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn connections_share_the_link() {
        let faults = Faults::none();
        faults.install(fault::parse("bandwidth:8Mbit=1h").unwrap());
        let link = Link::new(faults);
        let started = Instant::now();
        let (a, b) = tokio::join!(send(&link, 1_000_000), send(&link, 1_000_000));
        let both = started.elapsed();
        assert!(a.max(b) >= Duration::from_millis(1_950), "{a:?} {b:?}");
        assert!(both <= Duration::from_millis(2_050), "{both:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn unpaced_without_the_fault_and_after_its_window() {
        let faults = Faults::none();
        let link = Link::new(faults.clone());
        assert_eq!(send(&link, 5_000_000).await, Duration::ZERO);
        // Capped for the first second only: 1 MB then, the rest at once.
        faults.install(fault::parse("bandwidth:8Mbit=1s").unwrap());
        let took = send(&link, 5_000_000).await;
        assert!(
            (Duration::from_millis(950)..=Duration::from_millis(1_050)).contains(&took),
            "{took:?}"
        );
    }
}
