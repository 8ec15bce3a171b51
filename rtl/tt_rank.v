`default_nettype none
// tt_rank: the rank update of one TT bond (SPEC 5.6 steps 1-4), bit-exact to golden.semantics.rank_bond through
// golden/isa/rank.py RankDesc / execute_rank. The bond joins core k, shape (r0, mn, R) with its R slices interleaved
// (slice r at left_base + i R + r, i < left_rows = r0 mn), and core k+1, shape (R, mn', r1) with its slices
// contiguous (slice r at right_base + r right_cols + j, j < right_cols = mn' r1). Per slice r < R = rank:
//   M = sum of the squares of its D = left_rows + right_cols master words
//   Q = RQ(M * inv_d, q_shift, NEAREST)                        inv_d = round(2^24 / (D + 1)), q_shift = 2 F_w
//   lambda = SAT32(RQ(58982 lambda + 6554 Q, 16, NEAREST))     0.9 lambda + 0.1 M / (D + 1)
//   keep = lambda >= threshold && mask != 0; if no slice keeps, the live slice (mask != 0) of the largest lambda
//          keeps, the first of equals, or slice 0 if none is live (a bond never goes to rank 0)
//   tau = keep ? min(floor(tau_num / max(lambda, 1)), 2^15 - 1) : 0
// State words (16 bits each, one address space with the cores): lambda r at lam_base + 2r (low half) and
// lam_base + 2r + 1 (high half, signed), mask r at mask_base + r (read: live if not 0; written 0 or 1), tau r
// at tau_base + r. Nothing is held between ops: the memory has the state, so the host reads and writes it
// through the same window as the cores.
//
// Small and serial on purpose: a rank update runs once every few mini-batches. One read port, one write port,
// a 16 x 16 squarer, one 73-bit shift-and-add accumulator for both products, a 16-step restoring divider.
// Pass 1, per slice: read lambda (2 words), the mask and the D words, one a cycle; sum the squares; M * inv_d
// (24 steps, the rounding half added first), the right shift by q_shift (one bit a step), the blend (16 steps
// over the bits of the two constants, Q clamped at 2^36: any larger Q saturates lambda
// anyway, whatever the old lambda); write lambda.
// Then the keep-one rule (one cycle). Pass 2, per slice: read the new lambda back, divide (16 steps; a quotient
// of 2^15 or more gives 2^15 - 1), write tau and the mask.
//
// Memories are outside, as in tt_ewise: a synchronous read port of fixed latency MEM_LAT (address and rd_en in
// cycle c, data in cycle c + MEM_LAT; words signed, narrower banks sign-extended to 16 bits) and a write port
// (taken at the end of the cycle wr_en is high). Pass 2 reads a lambda two cycles or more after pass 1 wrote
// it. The state words must not overlap the cores (golden.isa.rank.check_rank). Descriptor ports must be held stable
// from start until done.
//
// Timing (no stalls), R = rank, D = left_rows + right_cols, L = MEM_LAT, q = q_shift: start in cycle 0, the
// descriptor check in cycle 1 (tt_op_ctrl), pass 1 from cycle 2, done (and busy low) from cycle
//   3 + R (D + 2 L + q + 69)
// until the next start (golden/isa/timing.py rank_cycles).
//
// Errors are found in the check cycle, before any memory access, so an illegal op leaves the memory untouched:
// done and error rise the cycle after it with error_code (the lowest that applies; golden.isa.rank.rank_error):
//   1 rank 0 or above MASK_N; 2 left_rows or right_cols 0; 3 q_shift above 47.
// A start while busy is ignored.
module tt_rank #(
  parameter integer ADDR_W  = 20,  // word address width, 16..32 (a slice may hold 2^16 - 1 words a core)
  parameter integer MEM_LAT = 1,   // read latency of the memory port, 1..8
  parameter integer MASK_N  = 16   // the largest rank, 1..16
) (
  input  wire              clk,
  input  wire              rst,
  // op descriptor (golden.isa.rank.pack_rank_ports)
  input  wire              start,
  input  wire [ADDR_W-1:0] left_base,
  input  wire [ADDR_W-1:0] right_base,
  input  wire [ADDR_W-1:0] lam_base,
  input  wire [ADDR_W-1:0] mask_base,
  input  wire [ADDR_W-1:0] tau_base,
  input  wire [4:0]        rank,        // R, 1..MASK_N
  input  wire [15:0]       left_rows,   // words of a slice in core k (r0 mn), >= 1
  input  wire [15:0]       right_cols,  // words of a slice in core k+1 (mn' r1), >= 1
  input  wire [23:0]       inv_d,       // round(2^24 / (D + 1))
  input  wire [5:0]        q_shift,     // 0..47
  input  wire [31:0]       threshold,   // unsigned, 24 fraction bits
  input  wire [47:0]       tau_num,     // unsigned: tau = tau_num / lambda
  // status
  output wire              busy,
  output wire              done,
  output wire              error,
  output wire [3:0]        error_code,
  // memory ports
  output wire              rd_en,
  output wire [ADDR_W-1:0] rd_addr,
  input  wire [15:0]       rd_data,
  output wire              wr_en,
  output wire [ADDR_W-1:0] wr_addr,
  output wire [15:0]       wr_data
);

  localparam integer ACC_W = 73;  // M * inv_d < 2^71 (M < 2^47: 2^17 squares below 2^30), signed
  localparam integer SUM_W = 47;
  localparam integer REM_W = 48;
  localparam [15:0] DECAY_Q16 = 16'd58982;  // round(0.9 * 2^16)
  localparam [15:0] GAIN_Q16 = 16'd6554;    // round(0.1 * 2^16)
  localparam [14:0] TAU_MAX = 15'h7fff;
`include "tt_arch.vh"  // ERR_NONE, RANK_ERR_*
  // FSM states
  localparam [3:0] ST_IDLE  = 4'd0;
  localparam [3:0] ST_READ  = 4'd1;   // pass 1: lambda, mask and the slice's words, one read a cycle
  localparam [3:0] ST_DRAIN = 4'd2;   // the last squares reach the sum
  localparam [3:0] ST_MUL   = 4'd3;   // M * inv_d, 24 steps
  localparam [3:0] ST_SHIFT = 4'd4;   // >> q_shift, one bit a step
  localparam [3:0] ST_BLEND_LOAD = 4'd5;
  localparam [3:0] ST_BLEND = 4'd6;   // 58982 lambda + 6554 Q, 16 steps
  localparam [3:0] ST_SAT   = 4'd7;
  localparam [3:0] ST_W_LO  = 4'd8;
  localparam [3:0] ST_W_HI  = 4'd9;
  localparam [3:0] ST_KEEP  = 4'd10;  // the keep-one rule
  localparam [3:0] ST_READ2 = 4'd11;  // pass 2: the new lambda back
  localparam [3:0] ST_DIV   = 4'd12;  // 16 restoring steps
  localparam [3:0] ST_W_TAU = 4'd13;
  localparam [3:0] ST_W_MASK = 4'd14;
  // read tags
  localparam [2:0] RD_NONE = 3'd0;
  localparam [2:0] RD_LO   = 3'd1;
  localparam [2:0] RD_HI   = 3'd2;
  localparam [2:0] RD_MASK = 3'd3;
  localparam [2:0] RD_LEFT = 3'd4;
  localparam [2:0] RD_RIGHT = 3'd5;

  // Elaboration-time parameter checks (a missing module stops both Icarus 11 and Verilator).
  generate
    if (ADDR_W < 16 || ADDR_W > 32) begin : g_bad_addr_w
      error_tt_rank_ADDR_W_must_be_16_to_32 u_error ();
    end
    if (MEM_LAT < 1 || MEM_LAT > 8) begin : g_bad_mem_lat
      error_tt_rank_MEM_LAT_must_be_1_to_8 u_error ();
    end
    if (MASK_N < 1 || MASK_N > 16) begin : g_bad_mask_n
      error_tt_rank_MASK_N_must_be_1_to_16 u_error ();
    end
  endgenerate

  // ---- legality check (registered at start, tt_op_ctrl), busy / done / error ----
  wire [3:0] err_d = (rank == 5'd0 || {27'd0, rank} > MASK_N) ? RANK_ERR_RANK :
                     (left_rows == 16'd0 || right_cols == 16'd0) ? RANK_ERR_COUNT :
                     (q_shift > 6'd47) ? RANK_ERR_SHIFT : ERR_NONE;
  wire       fin;  // the last write is on the port this cycle
  wire       run;
  wire [3:0] err_q;

  tt_op_ctrl u_ctrl (
    .clk        (clk),
    .rst        (rst),
    .start      (start),
    .err_d      (err_d),
    .fin        (fin),
    .run        (run),
    .busy       (busy),
    .done       (done),
    .error_code (err_q)
  );
  assign error = done && (err_q != ERR_NONE);
  assign error_code = err_q;

  // ---- control ----
  reg  [3:0]        state_q;
  reg  [4:0]        slice_q;      // r
  reg  [2:0]        rd_kind_q;    // what the read issued this cycle is
  reg  [15:0]       rd_left_q;    // words of the current kind still to read after this one
  reg  [ADDR_W-1:0] rd_addr_q;
  reg  [ADDR_W-1:0] left_start_q;   // left_base + r
  reg  [ADDR_W-1:0] right_start_q;  // right_base + r right_cols
  reg  [5:0]        step_q;       // steps left in ST_MUL / ST_SHIFT / ST_BLEND / ST_DIV
  reg  [15:0]       keep_q;       // bits at and above rank stay 0
  wire [4:0]        last_slice = rank - 5'd1;
  wire [ADDR_W-1:0] slice_a = {{(ADDR_W-5){1'b0}}, slice_q};
  wire [ADDR_W-1:0] lam_addr = lam_base + {slice_a[ADDR_W-2:0], 1'b0};
  wire              rd_last_word = rd_left_q == 16'd0;
  wire [4:0]        next_slice = (state_q == ST_IDLE || state_q == ST_KEEP) ? 5'd0 : slice_q + 5'd1;
  wire [ADDR_W-1:0] left_step = {{(ADDR_W-5){1'b0}}, rank};
  wire [ADDR_W-1:0] right_step = {{(ADDR_W-16){1'b0}}, right_cols};
  wire              sum_done;     // the slice's M is complete in sum_q this cycle
  wire              lam_back;     // pass 2: the high half of lambda is on rd_data this cycle

  // the next read (pass 1: LO, HI, MASK, LEFT x left_rows, RIGHT x right_cols; pass 2: LO, HI)
  always @(posedge clk) begin
    if (rst) begin
      rd_kind_q <= RD_NONE;
    end else if ((run) || (state_q == ST_W_HI && slice_q != last_slice) || state_q == ST_KEEP ||
                 (state_q == ST_W_MASK && slice_q != last_slice)) begin
      rd_kind_q <= RD_LO;
    end else begin
      case (rd_kind_q)
        RD_LO:    rd_kind_q <= RD_HI;
        RD_HI:    rd_kind_q <= (state_q == ST_READ) ? RD_MASK : RD_NONE;
        RD_MASK:  rd_kind_q <= RD_LEFT;
        RD_LEFT:  rd_kind_q <= rd_last_word ? RD_RIGHT : RD_LEFT;
        RD_RIGHT: rd_kind_q <= rd_last_word ? RD_NONE : RD_RIGHT;
        default:  rd_kind_q <= RD_NONE;
      endcase
    end
  end

  // the address of the next read, and the words left of its kind
  always @(posedge clk) begin
    case (rd_kind_q)
      RD_LO: begin
        rd_addr_q <= lam_addr + {{(ADDR_W-1){1'b0}}, 1'b1};
      end
      RD_HI: begin
        rd_addr_q <= mask_base + slice_a;
      end
      RD_MASK: begin
        rd_addr_q <= left_start_q;
        rd_left_q <= left_rows - 16'd1;
      end
      RD_LEFT: begin
        rd_addr_q <= rd_last_word ? right_start_q : rd_addr_q + left_step;
        rd_left_q <= rd_last_word ? right_cols - 16'd1 : rd_left_q - 16'd1;
      end
      RD_RIGHT: begin
        rd_addr_q <= rd_addr_q + {{(ADDR_W-1){1'b0}}, 1'b1};
        rd_left_q <= rd_left_q - 16'd1;
      end
      default: begin
        rd_addr_q <= lam_base + {{(ADDR_W-6){1'b0}}, next_slice, 1'b0};  // the LO read of the slice that starts next
      end
    endcase
  end
  assign rd_en = rd_kind_q != RD_NONE;
  assign rd_addr = rd_addr_q;

  // ---- read data: tags through the memory latency ----
  wire [3:0] tag_m;
  tt_delay #(
    .WIDTH (4),
    .DEPTH (MEM_LAT),
    .RESET (1)
  ) u_rd_tag (
    .clk (clk),
    .rst (rst),
    .d   ({rd_kind_q == RD_RIGHT && rd_last_word, rd_kind_q}),
    .q   (tag_m)
  );
  wire [2:0] m_kind = tag_m[2:0];
  wire       m_last = tag_m[3];
  wire signed [15:0] m_word = rd_data;

  reg  [15:0]        lam_lo_q;
  reg  signed [15:0] lam_hi_q;
  reg                live_q;  // the slice's mask word is not 0
  always @(posedge clk) begin
    if (m_kind == RD_LO) begin
      lam_lo_q <= m_word;
    end
    if (m_kind == RD_HI) begin
      lam_hi_q <= m_word;
    end
    if (m_kind == RD_MASK) begin
      live_q <= m_word != 16'sd0;
    end
  end

  // squares registered, then summed
  reg                sq_valid_q;
  reg                sq_last_q;
  reg                sum_done_q;
  reg  [29:0]        sq_q;  // w^2 <= 2^30 is 31 bits only for w = -2^15; kept exact below
  reg                sq_top_q;
  reg  [SUM_W-1:0]   sum_q;
  wire signed [31:0] sq_full = m_word * m_word;
  always @(posedge clk) begin
    if (rst) begin
      sq_valid_q <= 1'b0;
      sq_last_q  <= 1'b0;
      sum_done_q <= 1'b0;
    end else begin
      sq_valid_q <= (m_kind == RD_LEFT) || (m_kind == RD_RIGHT);
      sq_last_q  <= m_last;
      sum_done_q <= sq_last_q;
    end
    {sq_top_q, sq_q} <= sq_full[30:0];
    if (m_kind == RD_LO) begin
      sum_q <= {SUM_W{1'b0}};
    end else if (sq_valid_q) begin
      sum_q <= sum_q + {{(SUM_W-31){1'b0}}, sq_top_q, sq_q};
    end
  end
  wire unused_sq_sign = sq_full[31];
  assign sum_done = sum_done_q;
  assign lam_back = m_kind == RD_HI && state_q == ST_READ2;

  // ---- the shift-and-add accumulator (pass 1) ----
  reg  signed [ACC_W-1:0] acc_q;
  reg  signed [ACC_W-1:0] mul_a_q;   // shifted left a step
  reg  signed [ACC_W-1:0] mul_c_q;   // the blend's lambda, shifted left a step
  reg  [23:0]             mul_b_q;   // the multiplier, shifted right a step
  wire [3:0]              bit_q = 4'd15 - step_q[3:0];  // the blend's constant bit (step_q counts 15 down to 0)
  reg  signed [31:0]      lam_new_q;
  wire signed [31:0]      lam_old = {lam_hi_q, lam_lo_q};
  wire [ACC_W-1:0]        half = ({{(ACC_W-1){1'b0}}, 1'b1} << q_shift) >> 1;
  wire                    q_big = acc_q[ACC_W-1:36] != {(ACC_W-36){1'b0}};  // Q >= 2^36 (Q is never negative)
  wire [36:0]             q_clamped = q_big ? 37'h10_0000_0000 : {1'b0, acc_q[35:0]};
  wire signed [ACC_W-1:0] add_a = (state_q == ST_MUL ? mul_b_q[0] : GAIN_Q16[bit_q]) ? mul_a_q : {ACC_W{1'b0}};
  wire signed [ACC_W-1:0] add_c = (state_q == ST_BLEND && DECAY_Q16[bit_q]) ? mul_c_q : {ACC_W{1'b0}};
  wire signed [ACC_W-1:0] blend = acc_q >>> 16;
  // Only the top clamps: 0.9 of an old lambda >= -2^31 plus 0.1 Q >= 0 never falls below -2^31.
  wire                    lam_hi_sat = blend > $signed({{(ACC_W-31){1'b0}}, {31{1'b1}}});

  always @(posedge clk) begin
    case (state_q)
      ST_DRAIN: begin
        acc_q   <= $signed(half);
        mul_a_q <= $signed({{(ACC_W-SUM_W){1'b0}}, sum_q});
        mul_b_q <= inv_d;
      end
      ST_MUL: begin
        acc_q   <= acc_q + add_a;
        mul_a_q <= mul_a_q <<< 1;
        mul_b_q <= mul_b_q >> 1;
      end
      ST_SHIFT: begin
        acc_q <= acc_q >>> 1;
      end
      ST_BLEND_LOAD: begin
        acc_q   <= $signed({{(ACC_W-16){1'b0}}, 16'h8000});  // the rounding half of the final >> 16
        mul_a_q <= $signed({{(ACC_W-37){1'b0}}, q_clamped});
        mul_c_q <= {{(ACC_W-32){lam_old[31]}}, lam_old};
      end
      ST_BLEND: begin
        acc_q   <= acc_q + add_a + add_c;
        mul_a_q <= mul_a_q <<< 1;
        mul_c_q <= mul_c_q <<< 1;
      end
      ST_SAT: begin
        lam_new_q <= lam_hi_sat ? 32'sh7fff_ffff : blend[31:0];
      end
      default: begin
      end
    endcase
  end

  // ---- the keep-one rule: the live slice of the largest lambda (the first of equals), slice 0 if none is live ----
  reg  signed [31:0] best_q;
  reg  [3:0]         best_idx_q;
  reg                best_valid_q;
  wire               above_thr = $signed({lam_new_q[31], lam_new_q}) >= $signed({1'b0, threshold});
  always @(posedge clk) begin
    if (run) begin
      keep_q       <= 16'd0;
      best_idx_q   <= 4'd0;
      best_valid_q <= 1'b0;
    end else if (state_q == ST_W_LO) begin
      keep_q[slice_q[3:0]] <= above_thr && live_q;
      if (live_q && (!best_valid_q || lam_new_q > best_q)) begin  // strict: the first of equals stays
        best_q       <= lam_new_q;
        best_idx_q   <= slice_q[3:0];
        best_valid_q <= 1'b1;
      end
    end else if (state_q == ST_KEEP && keep_q == 16'd0) begin
      keep_q[best_idx_q] <= 1'b1;
    end
  end

  // ---- the divider (pass 2): tau = min(tau_num / max(lambda, 1), 2^15 - 1) ----
  reg  [REM_W-1:0] rem_q;
  reg  [46:0]      den_q;  // max(lambda, 1) << (15 - step)
  reg  [15:0]      quo_q;
  wire signed [31:0] lam_read = {m_word, lam_lo_q};
  wire [30:0]      den0 = (lam_read < 32'sd1) ? 31'd1 : lam_read[30:0];
  wire [REM_W:0]   rem_sub = {1'b0, rem_q} - {2'b0, den_q};
  wire             keep_now = keep_q[slice_q[3:0]];
  wire [15:0]      tau = !keep_now ? 16'd0 : quo_q[15] ? {1'b0, TAU_MAX} : quo_q;
  always @(posedge clk) begin
    if (lam_back) begin
      rem_q <= tau_num;
      den_q <= {den0, 16'd0} >> 1;
      quo_q <= 16'd0;
    end else if (state_q == ST_DIV) begin
      if (!rem_sub[REM_W]) begin
        rem_q <= rem_sub[REM_W-1:0];
      end
      den_q <= den_q >> 1;
      quo_q <= {quo_q[14:0], !rem_sub[REM_W]};
    end
  end

  // ---- the FSM ----
  always @(posedge clk) begin
    if (rst) begin
      state_q <= ST_IDLE;
    end else begin
      case (state_q)
        ST_IDLE: begin
          if (run) begin
            state_q <= ST_READ;
            slice_q <= 5'd0;
            left_start_q  <= left_base;
            right_start_q <= right_base;
          end
        end
        ST_READ: begin
          if (rd_kind_q == RD_RIGHT && rd_last_word) begin
            state_q <= ST_DRAIN;
          end
        end
        ST_DRAIN: begin
          if (sum_done) begin
            state_q <= ST_MUL;
            step_q  <= 6'd23;
          end
        end
        ST_MUL: begin
          step_q <= step_q - 6'd1;
          if (step_q == 6'd0) begin
            state_q <= (q_shift == 6'd0) ? ST_BLEND_LOAD : ST_SHIFT;
            step_q  <= q_shift - 6'd1;
          end
        end
        ST_SHIFT: begin
          step_q <= step_q - 6'd1;
          if (step_q == 6'd0) begin
            state_q <= ST_BLEND_LOAD;
          end
        end
        ST_BLEND_LOAD: begin
          state_q <= ST_BLEND;
          step_q  <= 6'd15;
        end
        ST_BLEND: begin
          step_q <= step_q - 6'd1;
          if (step_q == 6'd0) begin
            state_q <= ST_SAT;
          end
        end
        ST_SAT: begin
          state_q <= ST_W_LO;
        end
        ST_W_LO: begin
          state_q <= ST_W_HI;
        end
        ST_W_HI: begin
          if (slice_q == last_slice) begin
            state_q <= ST_KEEP;
            slice_q <= 5'd0;
          end else begin
            state_q <= ST_READ;
            slice_q <= slice_q + 5'd1;
            left_start_q  <= left_start_q + {{(ADDR_W-1){1'b0}}, 1'b1};
            right_start_q <= right_start_q + right_step;
          end
        end
        ST_KEEP: begin
          state_q <= ST_READ2;
        end
        ST_READ2: begin
          if (lam_back) begin
            state_q <= ST_DIV;
            step_q  <= 6'd15;
          end
        end
        ST_DIV: begin
          step_q <= step_q - 6'd1;
          if (step_q == 6'd0) begin
            state_q <= ST_W_TAU;
          end
        end
        ST_W_TAU: begin
          state_q <= ST_W_MASK;
        end
        ST_W_MASK: begin
          if (slice_q == last_slice) begin
            state_q <= ST_IDLE;
          end else begin
            state_q <= ST_READ2;
            slice_q <= slice_q + 5'd1;
          end
        end
        default: begin
          state_q <= ST_IDLE;
        end
      endcase
    end
  end

  // ---- the write port ----
  assign fin = state_q == ST_W_MASK && slice_q == last_slice;
  assign wr_en = state_q == ST_W_LO || state_q == ST_W_HI || state_q == ST_W_TAU || state_q == ST_W_MASK;
  assign wr_addr = state_q == ST_W_LO  ? lam_addr :
                   state_q == ST_W_HI  ? lam_addr + {{(ADDR_W-1){1'b0}}, 1'b1} :
                   state_q == ST_W_TAU ? tau_base + slice_a : mask_base + slice_a;
  assign wr_data = state_q == ST_W_LO  ? lam_new_q[15:0] :
                   state_q == ST_W_HI  ? lam_new_q[31:16] :
                   state_q == ST_W_TAU ? tau : {15'd0, keep_now};

endmodule
`default_nettype wire
