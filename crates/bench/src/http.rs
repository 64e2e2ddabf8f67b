//! The load generator's HTTP/1.1 client: one keep-alive connection per simulated client, each
//! request written as ready-made bytes, each answer read to its last byte by its
//! Content-Length. It shares the machine's two cores with the server it measures, so it does no
//! more than a client must (no pool, no redirects, no decompression, no JSON).

use std::io;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A request as it goes on the wire, and the status that counts as success.
pub struct Request {
    pub bytes: Vec<u8>,
    pub expect: u16,
}

impl Request {
    /// `method path` to `host` with `headers` and `body` (a JSON body when not empty).
    pub fn new(method: &str, host: &str, path: &str, headers: &[(&str, &str)], body: &[u8], expect: u16) -> Self {
        let mut bytes = Vec::with_capacity(256 + body.len());
        bytes.extend_from_slice(format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\n").as_bytes());
        for (name, value) in headers {
            bytes.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        if !body.is_empty() {
            bytes.extend_from_slice(b"Content-Type: application/json\r\n");
        }
        bytes.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        bytes.extend_from_slice(body);
        Self { bytes, expect }
    }
}

/// One client's connection to the server, opened again after an error or a `Connection: close`.
pub struct Connection {
    host: String,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
}

impl Connection {
    /// A connection to `base` (`http://host:port`), opened at its first request.
    pub fn new(base: &str) -> Self {
        Self { host: base.trim_start_matches("http://").to_owned(), stream: None, buf: Vec::with_capacity(16 * 1024) }
    }

    /// The host and port, as the `Host` header names them.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Sends `request` and reads its whole answer; whether it had the expected status.
    pub async fn send(&mut self, request: &Request) -> io::Result<bool> {
        let answer = self.exchange(request).await;
        if answer.is_err() {
            self.stream = None;
        }
        answer.map(|status| status == request.expect)
    }

    async fn exchange(&mut self, request: &Request) -> io::Result<u16> {
        let stream = match &mut self.stream {
            Some(stream) => stream,
            None => {
                let stream = TcpStream::connect(&self.host).await?;
                stream.set_nodelay(true)?;
                self.stream.insert(stream)
            }
        };
        stream.write_all(&request.bytes).await?;
        self.buf.clear();
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut response = httparse::Response::new(&mut headers);
            let parsed = response.parse(&self.buf).map_err(io::Error::other)?;
            if let httparse::Status::Complete(head) = parsed {
                let status = response.code.unwrap_or(0);
                let header =
                    |name: &str| response.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value);
                if header("transfer-encoding").is_some() {
                    return Err(io::Error::other("a chunked answer: the load generator reads Content-Length only"));
                }
                let length: usize = header("content-length")
                    .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse().ok())
                    .ok_or_else(|| io::Error::other("an answer without Content-Length"))?;
                let close = header("connection").is_some_and(|v| v.eq_ignore_ascii_case(b"close"));
                while self.buf.len() < head + length {
                    read_more(stream, &mut self.buf).await?;
                }
                if close {
                    self.stream = None;
                }
                return Ok(status);
            }
            read_more(stream, &mut self.buf).await?;
        }
    }
}

async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<()> {
    buf.reserve(8 * 1024);
    if stream.read_buf(buf).await? == 0 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request and its answer through a real socket: the status is read, the body is read to
    /// its end, and the connection is used again for the next request.
    #[tokio::test]
    async fn answers_are_read_whole_and_the_connection_kept() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut seen = Vec::new();
            for status in ["201 Created", "409 Conflict"] {
                let mut buf = vec![0; 4096];
                let n = socket.read(&mut buf).await.unwrap();
                seen.push(String::from_utf8_lossy(&buf[..n]).into_owned());
                let body = "{\"seq\":1}";
                let answer = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\n\r\n", body.len());
                // The head and the body in two writes: the client waits for the whole body.
                socket.write_all(answer.as_bytes()).await.unwrap();
                socket.flush().await.unwrap();
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                socket.write_all(body.as_bytes()).await.unwrap();
            }
            seen
        });
        let mut connection = Connection::new(&base);
        let host = connection.host().to_owned();
        let post = Request::new("POST", &host, "/v1/x", &[("Idempotency-Key", "k1")], b"{}", 201);
        assert!(connection.send(&post).await.unwrap());
        assert!(!connection.send(&post).await.unwrap(), "409 is not the 201 expected");
        let seen = server.await.unwrap();
        assert!(seen[0].starts_with("POST /v1/x HTTP/1.1\r\n"), "{seen:?}");
        assert!(seen[0].contains("Idempotency-Key: k1\r\n") && seen[0].ends_with("\r\n\r\n{}"), "{seen:?}");
        assert_eq!(seen.len(), 2, "both requests on one connection");
    }
}
