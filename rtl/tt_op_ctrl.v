`default_nettype none
// tt_op_ctrl: the op control the units share (tt_contract, tt_ewise, tt_sce).
//
// A start while idle takes an op. Its legality code err_d (from the descriptor ports, held from start until
// done) is registered in that cycle, and the datapath starts in the next one (run) only if the code is 0: the
// descriptor checks have a cycle of their own instead of running into the start enables of the datapath. An
// illegal op raises done with its code in the cycle after the check, before any memory access or draw.
// run is a flip-flop of its own, loaded beside check_q and legal_q rather than decoded from them: it starts
// every wide datapath enable of a unit, and a gate between those registers and that fan-out would sit on the
// unit's longest path.
// busy is high from the cycle after start until done; a start while busy is ignored.
module tt_op_ctrl (
  input  wire       clk,
  input  wire       rst,
  input  wire       start,
  input  wire [3:0] err_d,       // the descriptor's error code, 0 when the op is legal
  input  wire       fin,         // the running op's last write is done and its statistics complete this cycle
  output wire       run,         // start the datapath (the cycle after start, legal ops only)
  output wire       busy,
  output wire       done,        // the last op finished or was refused (level until the next start)
  output wire [3:0] error_code   // the last op's code, valid with done
);
  reg       check_q;  // the cycle after start: the code is registered, the datapath not started yet
  reg       busy_q;
  reg       done_q;
  reg [3:0] err_q;
  reg       legal_q;  // err_q == 0, registered with it
  reg       run_q;    // check_q && legal_q
  wire      go = start && !busy_q;

  always @(posedge clk) begin
    if (rst) begin
      check_q <= 1'b0;
      busy_q  <= 1'b0;
      done_q  <= 1'b0;
      err_q   <= 4'd0;
      legal_q <= 1'b1;
      run_q   <= 1'b0;
    end else begin
      check_q <= go;
      run_q   <= go && err_d == 4'd0;
      if (go) begin
        busy_q <= 1'b1;
        done_q <= 1'b0;
        err_q  <= err_d;
        legal_q <= err_d == 4'd0;
      end else if ((check_q && !legal_q) || fin) begin
        busy_q <= 1'b0;
        done_q <= 1'b1;
      end
    end
  end

  assign run = run_q;
  assign busy = busy_q;
  assign done = done_q;
  assign error_code = err_q;

endmodule
`default_nettype wire
