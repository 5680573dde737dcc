use super::*;

#[test]
fn plain_text_drops_colours_and_splits_progress_redraws() {
    // tqdm's redraws and a coloured traceback line, as a terminal receives them.
    let raw = b"\r  0%|          | 0/9565 [00:00<?, ?it/s]\r  0%|          | 1/9565 [00:19<50:33:46, 19.03s/it]\n\x1b[31mRuntimeError\x1b[0m: CUDA out of memory.\r\n\x1b]0;title\x07done";
    assert_eq!(
        plain_text(raw),
        "\n  0%|          | 0/9565 [00:00<?, ?it/s]\n  0%|          | 1/9565 [00:19<50:33:46, 19.03s/it]\nRuntimeError: CUDA out of memory.\r\ndone"
            .replace("\r\n", "\n")
    );
}
