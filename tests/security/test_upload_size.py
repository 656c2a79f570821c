"""#34.6: the web app's upload route takes no file bigger than the largest thing CHIEF accepts (a 1 GiB upload to
/gradio_api/upload was accepted in 6 s and kept in the temp folder). Bodies are streamed from generators against
the real launched app, and the sender stops as soon as the server answers."""

from __future__ import annotations

import http.client
import select
from urllib.parse import urlsplit

from app.ui import upload_cap

CHUNK = 1 << 20
BOUNDARY = "chiefboundary7"


def stream_upload(base: str, total: int | None, chunks, limit: int) -> tuple[int, str, int]:
    """POST a multipart upload of `chunks` (a generator) to /gradio_api/upload: with Content-Length `total`, or
    chunked when None. Stops sending once the server has answered (or after `limit` bytes). Returns (status, text,
    bytes sent)."""
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.putrequest("POST", "/gradio_api/upload")
    conn.putheader("Content-Type", f"multipart/form-data; boundary={BOUNDARY}")
    if total is None:
        conn.putheader("Transfer-Encoding", "chunked")
    else:
        conn.putheader("Content-Length", str(total))
    conn.endheaders()
    sock = conn.sock
    assert sock is not None
    head = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="big.zip"\r\n'
        "Content-Type: application/zip\r\n\r\n"
    ).encode()
    sent = 0
    for data in (head, *chunks):
        if select.select([sock], [], [], 0)[0] or sent > limit:
            break  # the server has answered: stop
        try:
            sock.sendall(b"%x\r\n%s\r\n" % (len(data), data) if total is None else data)
        except OSError:
            break
        sent += len(data)
    res = conn.getresponse()
    text = res.read().decode(errors="replace")
    conn.close()
    return res.status, text, sent


def zeros(n: int):
    block = bytes(CHUNK)
    for _ in range(n // CHUNK):
        yield block


def leftovers(home) -> list[str]:
    folder = home / "tmp" / "gradio"
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_the_upload_cap_is_the_largest_thing_chief_takes(make_studio):
    from app.services.keyframes import MAX_UPLOAD_BYTES
    from generation.audio.upload import UploadLimits

    assert upload_cap(make_studio().config) == 512 << 20  # an archive for Import (web_archive_mb), the largest
    small = make_studio(web_archive_mb=1).config
    assert upload_cap(small) == max(UploadLimits().max_bytes, MAX_UPLOAD_BYTES) == 200 << 20  # then a track


def test_a_1_gib_upload_is_refused_before_it_is_read(make_studio, serve, tmp_path):
    studio = make_studio()
    base = serve(studio)
    before = leftovers(studio.config.home)
    status, text, sent = stream_upload(base, 1 << 30, zeros(1 << 30), limit=256 << 20)
    assert status == 413 and "too big: the web app takes files of at most 512 MB" in text, (status, text)
    assert sent < 64 << 20  # answered at once, not after the body (socket buffers hold a few MB)
    assert leftovers(studio.config.home) == before


def test_a_chunked_upload_over_the_cap_is_cut_off_and_leaves_nothing(make_studio, serve):
    """No Content-Length: the body is refused once the file passes the cap (Gradio's max_file_size), and the part
    already written to the temp folder is removed."""
    studio = make_studio(web_archive_mb=1)
    base = serve(studio)
    cap = upload_cap(studio.config)
    before = leftovers(studio.config.home)
    status, text, sent = stream_upload(base, None, zeros(1 << 30), limit=cap + (64 << 20))
    assert status == 413 and ("maximum allowed size" in text or "too big" in text), (status, text)
    assert cap < sent < cap + (64 << 20)
    assert leftovers(studio.config.home) == before


def test_a_chunked_body_of_many_files_is_cut_off_past_the_cap(make_studio, serve):
    """Files each under the cap, more than it together, without a Content-Length: the Guard answers 413 once the
    body passes the cap and the app is told the client left."""
    studio = make_studio(web_archive_mb=1)
    base = serve(studio)
    cap = upload_cap(studio.config)

    def files():
        for i in range(8):
            yield from zeros(64 << 20)
            yield f'\r\n--{BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="f{i}.zip"\r\n\r\n'.encode()

    status, text, sent = stream_upload(base, None, files(), limit=cap + (64 << 20))
    assert status == 413 and "too big: the web app takes files of at most 200 MB" in text, (status, text)
    assert cap < sent < cap + (64 << 20)


def test_an_upload_within_the_cap_is_still_taken(make_studio, serve):
    studio = make_studio()
    base = serve(studio)
    body = [b"PK\x05\x06" + bytes(18), f"\r\n--{BOUNDARY}--\r\n".encode()]
    total = len(
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="big.zip"\r\n'
        "Content-Type: application/zip\r\n\r\n"
    ) + sum(map(len, body))
    status, text, _ = stream_upload(base, total, iter(body), limit=1 << 20)
    assert status == 200 and "big.zip" in text, (status, text)
